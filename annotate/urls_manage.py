from django.urls import path

from .views import manage

urlpatterns = [
    path("manage/", manage.campaign_list, name="manage"),
    path("manage/<slug:slug>/", manage.campaign_page, name="manage-campaign"),
    path("manage/<slug:slug>/action/", manage.campaign_action, name="manage-action"),
    path("manage/<slug:slug>/score/", manage.score, name="manage-score"),
    path("manage/<slug:slug>/unblock/<int:participation_id>/", manage.unblock, name="manage-unblock"),
    path("manage/<slug:slug>/block/<int:participation_id>/", manage.block, name="manage-block"),
    path("manage/<slug:slug>/crowd/", manage.crowd_settings, name="manage-crowd"),
    path("manage/<slug:slug>/payments.csv", manage.bonuses_csv, name="manage-bonuses-csv"),
    path("manage/<slug:slug>/workers.csv", manage.workers_csv, name="manage-workers-csv"),
    path("manage/<slug:slug>/judgements.csv", manage.judgements_csv, name="manage-judgements-csv"),
]
