from django.urls import path

from . import api

urlpatterns = [
    path("review/metrics/", api.ReviewMetricsView.as_view(), name="api-review-metrics"),
    path("review/disagreements/", api.DisagreementListView.as_view(), name="api-review-disagreements"),
    path("review/disagreements/<str:result_id>/meta-evaluation/", api.MetaEvaluationView.as_view(),
         name="api-review-meta-evaluation"),
    path("review/categories/", api.CategorySummaryView.as_view(), name="api-review-categories"),
    path("review/prelabel-runs/", api.PrelabelRunListView.as_view(), name="api-review-prelabel-runs"),
    path("review/prelabel-runs/<str:pk>/", api.PrelabelRunDetailView.as_view(), name="api-review-prelabel-run"),
    path("review/prelabel-runs/<str:pk>/cancel/", api.PrelabelRunCancelView.as_view(), name="api-review-prelabel-cancel"),
    path("review/validation/report/", api.ValidationReportView.as_view(), name="api-review-validation-report"),
    path("review/validation/<str:response_id>/", api.ValidationMarksView.as_view(), name="api-review-validation"),
]
