"""Export pages, under /export/ (namespace `annotation`)."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.export_page, name="export"),
    path("<int:pk>/", views.export_job, name="export_job"),
    path("<int:pk>/progress/", views.export_job_progress, name="export_progress"),
    path("<int:pk>/download/", views.export_download, name="export_download"),
]
