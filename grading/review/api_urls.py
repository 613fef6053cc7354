from django.urls import path
from rest_framework.routers import SimpleRouter

from . import api

urlpatterns = [
    path("review/metrics/", api.ReviewMetricsView.as_view(), name="api-review-metrics"),
    path("review/disagreements/", api.DisagreementListView.as_view(), name="api-review-disagreements"),
    path("review/disagreements/<str:result_id>/meta-evaluation/", api.MetaEvaluationView.as_view(),
         name="api-review-meta-evaluation"),
    path("review/categories/", api.CategorySummaryView.as_view(), name="api-review-categories"),
    path("review/validation/report/", api.ValidationReportView.as_view(), name="api-review-validation-report"),
    path("review/validation/<str:response_id>/", api.ValidationMarksView.as_view(), name="api-review-validation"),
]

# Meta-evaluation runs; review/prelabel-runs/ is their old address (kept, out of the schema).
router = SimpleRouter()
router.register("review/meta-eval-runs", api.MetaEvalRunViewSet, basename="api-review-meta-eval-run")
router.register("review/prelabel-runs", api.PrelabelRunViewSet, basename="api-review-prelabel-run")
urlpatterns += router.urls
