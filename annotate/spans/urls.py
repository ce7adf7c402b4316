"""Span task routes (namespace ``annotate``); the campaign entry ``/c/<slug>/`` is shared (``annotate.urls``)."""
from django.urls import path

from annotate.views import tasks

from . import views

urlpatterns = [
    path("c/<slug:slug>/spans/task/", tasks.task, {"family": "spans"}, name="spans-task"),
    path("c/<slug:slug>/spans/task/<int:assignment_id>/submit/", tasks.submit, {"family": "spans"}, name="spans-submit"),
    path("c/<slug:slug>/spans/tutorial/", views.tutorial, name="spans-tutorial"),
    path("c/<slug:slug>/spans/tutorial/done/", views.tutorial_done, name="spans-tutorial-done"),
    path("c/<slug:slug>/spans/qualification/", tasks.qualification, {"family": "spans"}, name="spans-qualification"),
    path("c/<slug:slug>/spans/gold/", views.gold_list, name="spans-gold"),
    path("c/<slug:slug>/spans/gold/<int:summary_id>/", views.gold_edit, name="spans-gold-edit"),
]
