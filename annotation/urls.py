from django.urls import include, path

from . import views

app_name = "annotation"
urlpatterns = [
    path("questions/", views.question_list, name="question_list"),
    path("questions/<int:pk>/", views.question_detail, name="question_detail"),
    path("questions/<int:pk>/rubric/", views.question_rubric_edit, name="question_rubric_edit"),
    path("questions/<int:pk>/rubric/v<int:version>/", views.question_rubric_version, name="question_rubric_version"),
    path("exams/", views.exam_list, name="exam_list"),
    path("exams/<int:pk>/", views.exam_detail, name="exam_detail"),
    path("responses/", views.response_list, name="response_list"),
    path("responses/<int:pk>/", views.response_detail, name="response_detail"),
    path("import/", views.dataset_import, name="import"),
    path("import/<int:pk>/", views.import_report, name="import_report"),
    path("import/jobs/<int:pk>/", views.import_job, name="import_job"),
    path("import/choose/<str:token>/", views.import_choose, name="import_choose"),
    path("import/jobs/<int:pk>/progress/", views.import_job_progress, name="import_job_progress"),
    path("", include("annotation.labelling.urls")),
    path("export/", include("annotation.export.urls")),
]
