from django.urls import path

from . import views, views_export, views_labels

app_name = "annotation"
urlpatterns = [
    path("questions/", views.question_list, name="question_list"),
    path("questions/<int:pk>/", views.question_detail, name="question_detail"),
    path("responses/", views.response_list, name="response_list"),
    path("responses/<int:pk>/", views.response_detail, name="response_detail"),
    path("import/", views.dataset_import, name="import"),
    path("import/<int:pk>/", views.import_report, name="import_report"),
    path("import/jobs/<int:pk>/", views.import_job, name="import_job"),
    path("import/jobs/<int:pk>/progress/", views.import_job_progress, name="import_job_progress"),
    # labelling
    path("label/", views_labels.label_queue, name="label_queue"),
    path("label/next/", views_labels.label_next, name="label_next"),
    path("label/<int:pk>/", views_labels.label_response, name="label"),
    path("label/<int:pk>/history/", views_labels.label_history, name="label_history"),
    path("assign/", views_labels.assign, name="assign"),
    path("agreement/", views_labels.agreement, name="agreement"),
    path("adjudication/", views_labels.adjudication_queue, name="adjudication_queue"),
    path("adjudication/<int:pk>/", views_labels.adjudicate, name="adjudicate"),
    # export
    path("export/", views_export.export_page, name="export"),
    path("export/<int:pk>/", views_export.export_job, name="export_job"),
    path("export/<int:pk>/progress/", views_export.export_job_progress, name="export_progress"),
    path("export/<int:pk>/download/", views_export.export_download, name="export_download"),
]
