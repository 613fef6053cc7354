"""API routes of generation runs, under /api/."""
from rest_framework.routers import SimpleRouter

from . import api

router = SimpleRouter()
router.register("generation-runs", api.GenerationRunViewSet, basename="generation-run")

urlpatterns = router.urls
