"""Pages of the judge studies, under /grading/studies/ (namespace `studies`)."""
from django.urls import include, path

from . import views

app_name = "studies"

urlpatterns = [
    path("probes/", views.probe_home, name="probes"),
    path("probes/estimate.json", views.probe_estimate, name="probe_estimate"),
    path("probes/runs/<int:pk>/", views.probe_run_detail, name="probe_run"),
    path("probes/runs/<int:pk>/progress.json", views.PROBE_RUN_ACTIONS.progress, name="probe_run_progress"),
    path("probes/runs/<int:pk>/cancel/", views.PROBE_RUN_ACTIONS.cancel, name="probe_run_cancel"),
    path("probes/runs/<int:pk>/resume/", views.PROBE_RUN_ACTIONS.resume, name="probe_run_resume"),
    path("style/", views.style_home, name="style"),
    path("probes/items/<int:pk>/", views.probe_item_detail, name="probe_item"),
    path("geometry/", include("studies.geometry.urls")),
]
