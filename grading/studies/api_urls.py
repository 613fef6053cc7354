"""API routes of the judge studies, under /api/."""
from rest_framework.routers import SimpleRouter

from . import api

router = SimpleRouter()
router.register("probe-runs", api.ProbeRunViewSet, basename="probe-run")

urlpatterns = router.urls
