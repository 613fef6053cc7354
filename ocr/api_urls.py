from rest_framework.routers import SimpleRouter

from . import api

router = SimpleRouter()
router.register("ocr/batches", api.ScanBatchViewSet, basename="ocr-api-batch")
router.register("ocr/pages", api.PageViewSet, basename="ocr-api-page")

urlpatterns = router.urls
