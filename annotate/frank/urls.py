"""FRANK routes (namespace ``annotate``); the campaign entry ``/c/<slug>/`` is shared (``annotate.urls``)."""
from django.urls import path

from annotate.frank import views as frank
from annotate.views import tasks

urlpatterns = [
    # FRANK.
    path("c/<slug:slug>/frank/tutorial/", frank.tutorial, name="frank-tutorial"),
    path("c/<slug:slug>/frank/tutorial/check/", frank.tutorial_check, name="frank-tutorial-check"),
    path("c/<slug:slug>/frank/tutorial/done/", frank.tutorial_done, name="frank-tutorial-done"),
    path("c/<slug:slug>/frank/qualification/", tasks.qualification, {"family": "frank"}, name="frank-qualification"),
    path("c/<slug:slug>/frank/preview/", frank.preview, name="frank-preview"),
    path("c/<slug:slug>/frank/task/", tasks.task, {"family": "frank"}, name="frank-task"),
    path("c/<slug:slug>/frank/task/<int:assignment_id>/entity/", frank.entity_answer, name="frank-entity"),
    path("c/<slug:slug>/frank/task/<int:assignment_id>/submit/", tasks.submit, {"family": "frank"}, name="frank-submit"),
]
