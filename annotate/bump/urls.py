"""BUMP routes (namespace ``annotate``); the campaign entry ``/c/<slug>/`` is shared (``annotate.urls``)."""
from django.urls import path

from annotate.bump import views as bump
from annotate.views import tasks

urlpatterns = [
    path("c/<slug:slug>/bump/qualification/", tasks.qualification, {"family": "bump"}, name="bump-qualification"),
    path("c/<slug:slug>/bump/task/", tasks.task, {"family": "bump"}, name="bump-task"),
    path("c/<slug:slug>/bump/task/<int:assignment_id>/submit/", tasks.submit, {"family": "bump"}, name="bump-submit"),
    path("c/<slug:slug>/bump/review/", bump.review, name="bump-review"),
    path("c/<slug:slug>/bump/review/edit/<int:edit_id>/", bump.review_decide, name="bump-review-decide"),
    path("c/<slug:slug>/bump/review/expert/<int:item_id>/", bump.expert_complete, name="bump-expert-complete"),
]
