from django.urls import path

from .views import campaign_setup, control, manage, study

urlpatterns = [
    path("manage/", manage.campaign_list, name="manage"),
    # The study path (annotate/views/study.py); before <slug> so that these words are not campaign slugs.
    path("manage/new/", study.new_campaign, name="manage-new"),
    path("manage/imports/<int:job_id>/", study.import_page, name="manage-import"),
    path("manage/imports/<int:job_id>/status.json", study.import_status, name="manage-import-status"),
    path("manage/imports/<int:job_id>/confirm/", study.import_confirm, name="manage-import-confirm"),
    path("manage/<slug:slug>/upload/<str:kind>/", study.upload_to_campaign, name="manage-upload"),
    path("manage/<slug:slug>/jobs/", study.campaign_jobs, name="manage-jobs"),
    path("manage/<slug:slug>/jobs/<str:job_kind>/<int:job_id>/<str:action>/", study.job_action, name="manage-job-action"),
    path("manage/<slug:slug>/", manage.campaign_page, name="manage-campaign"),
    path("manage/<slug:slug>/settings/", campaign_setup.settings_page, name="manage-settings"),
    path("manage/<slug:slug>/people/", campaign_setup.people_page, name="manage-people"),
    path("manage/<slug:slug>/people/<str:role>/<int:user_id>/revoke/", campaign_setup.revoke_access, name="manage-people-revoke"),
    path("manage/<slug:slug>/control/", control.control_page, name="manage-control"),
    path("manage/<slug:slug>/control/gold/", control.set_gold, name="manage-gold"),
    path("manage/<slug:slug>/control/gold/derive/", control.derive_gold, name="manage-gold-derive"),
    path("manage/<slug:slug>/control/gold/visibility/", control.gold_visibility, name="manage-gold-visibility"),
    path("manage/<slug:slug>/control/public-label-bonus/", control.public_label_bonus, name="manage-public-label-bonus"),
    path("manage/<slug:slug>/control/shipped-qualification/", control.shipped_qualification, name="manage-shipped-qualification"),
    path("manage/<slug:slug>/control/gold/<int:label_id>/remove/", control.remove_gold, name="manage-gold-remove"),
    path("manage/<slug:slug>/control/release/<int:participation_id>/", control.release_pay, name="manage-release-pay"),
    path("manage/<slug:slug>/action/", manage.campaign_action, name="manage-action"),
    path("manage/<slug:slug>/score/", manage.score, name="manage-score"),
    path("manage/<slug:slug>/unblock/<int:participation_id>/", manage.unblock, name="manage-unblock"),
    path("manage/<slug:slug>/block/<int:participation_id>/", manage.block, name="manage-block"),
    path("manage/<slug:slug>/crowd/", manage.crowd_settings, name="manage-crowd"),
    path("manage/<slug:slug>/payments.csv", manage.bonuses_csv, name="manage-bonuses-csv"),
    path("manage/<slug:slug>/workers.csv", manage.workers_csv, name="manage-workers-csv"),
    path("manage/<slug:slug>/judgements.csv", manage.judgements_csv, name="manage-judgements-csv"),
]
