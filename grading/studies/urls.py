"""Pages of the judge studies, under /grading/studies/ (namespace `grading`)."""
from django.urls import include, path

from . import views

urlpatterns = [
    path("probes/", views.probe_home, name="studies_probes"),
    path("probes/estimate.json", views.probe_estimate, name="studies_probe_estimate"),
    path("probes/runs/<int:pk>/", views.probe_run_detail, name="studies_probe_run"),
    path("probes/runs/<int:pk>/progress.json", views.PROBE_RUN_ACTIONS.progress, name="studies_probe_run_progress"),
    path("probes/runs/<int:pk>/cancel/", views.PROBE_RUN_ACTIONS.cancel, name="studies_probe_run_cancel"),
    path("probes/runs/<int:pk>/resume/", views.PROBE_RUN_ACTIONS.resume, name="studies_probe_run_resume"),
    path("style/", views.style_home, name="studies_style"),
    path("probes/items/<int:pk>/", views.probe_item_detail, name="studies_probe_item"),
    path("geometry/", include("grading.studies.geometry.urls")),
]
