"""API routes of the judge studies, under /api/."""
from rest_framework.routers import SimpleRouter

from . import api
from .geometry import api as geometry_api

router = SimpleRouter()
router.register("probe-runs", api.ProbeRunViewSet, basename="probe-run")
router.register("geometry-runs", geometry_api.GeometryRunViewSet, basename="geometry-run")

urlpatterns = router.urls
