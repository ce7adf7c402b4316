"""The rating task's routes (namespace ``annotate``): the shared task view and the shared submit view."""
from django.urls import path

from annotate.views import tasks

urlpatterns = [
    path("c/<slug:slug>/rating/task/", tasks.task, {"family": "rating"}, name="rating-task"),
    path("c/<slug:slug>/rating/task/<int:assignment_id>/submit/", tasks.submit, {"family": "rating"}, name="rating-submit"),
]
