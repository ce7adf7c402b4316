from django.urls import path

from .views import common, frank

urlpatterns = [
    # Shared entry flow (every campaign kind).
    path("c/<slug:slug>/", common.campaign_entry, name="campaign"),
    path("c/<slug:slug>/start/", common.campaign_entry, name="campaign-start"),
    path("c/<slug:slug>/done/", common.campaign_done, name="campaign-done"),
    # FRANK.
    path("c/<slug:slug>/frank/tutorial/", frank.tutorial, name="frank-tutorial"),
    path("c/<slug:slug>/frank/tutorial/check/", frank.tutorial_check, name="frank-tutorial-check"),
    path("c/<slug:slug>/frank/tutorial/done/", frank.tutorial_done, name="frank-tutorial-done"),
    path("c/<slug:slug>/frank/qualification/", frank.qualification, name="frank-qualification"),
    path("c/<slug:slug>/frank/preview/", frank.preview, name="frank-preview"),
    path("c/<slug:slug>/frank/task/", frank.task, name="frank-task"),
    path("c/<slug:slug>/frank/task/<int:assignment_id>/entity/", frank.entity_answer, name="frank-entity"),
    path("c/<slug:slug>/frank/task/<int:assignment_id>/submit/", frank.submit, name="frank-submit"),
]
