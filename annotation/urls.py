from django.urls import include, path

from . import views

app_name = "annotation"
urlpatterns = [
    path("questions/", views.question_list, name="question_list"),
    path("questions/<int:pk>/", views.question_detail, name="question_detail"),
    path("responses/", views.response_list, name="response_list"),
    path("responses/<int:pk>/", views.response_detail, name="response_detail"),
    path("import/", views.dataset_import, name="import"),
    path("import/<int:pk>/", views.import_report, name="import_report"),
    path("", include("annotation.labelling.urls")),
    path("export/", include("annotation.export.urls")),
]
