"""Pages of the error-geometry and step-surprisal study, under /grading/studies/geometry/ (namespace `studies`)."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.geometry_home, name="geometry"),
    path("runs/<int:pk>/", views.geometry_run, name="geometry_run"),
    path("runs/<int:pk>/progress.json", views.GEOMETRY_RUN_ACTIONS.progress, name="geometry_run_progress"),
    path("runs/<int:pk>/results.json", views.geometry_run_results, name="geometry_run_results"),
    path("runs/<int:pk>/segments.jsonl", views.geometry_run_segments, name="geometry_run_segments"),
    path("runs/<int:pk>/cancel/", views.GEOMETRY_RUN_ACTIONS.cancel, name="geometry_run_cancel"),
    path("runs/<int:pk>/resume/", views.GEOMETRY_RUN_ACTIONS.resume, name="geometry_run_resume"),
]
