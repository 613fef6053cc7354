"""API routes of the judges, under /api/."""
from rest_framework.routers import SimpleRouter

from . import api

router = SimpleRouter()
router.register("judge-endpoints", api.LlmEndpointViewSet, basename="judge-endpoint")
router.register("judge-settings", api.JudgeSettingViewSet, basename="judge-setting")
router.register("judge-configs", api.JudgeSettingOldAddressViewSet, basename="judge-config")  # the old address, out of the schema
router.register("judge-runs", api.JudgeRunViewSet, basename="judge-run")
router.register("judge-results", api.JudgeResultViewSet, basename="judge-result")

urlpatterns = router.urls
