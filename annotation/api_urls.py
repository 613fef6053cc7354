from django.urls import path
from rest_framework.routers import DefaultRouter

from . import api
from .export import api as api_export
from .labelling import api as api_labels

router = DefaultRouter()
router.include_format_suffixes = False  # JSON only: no /api/exams/1.json routes
router.register("exams", api.ExamViewSet, basename="exam")
router.register("questions", api.QuestionViewSet, basename="question")
router.register("responses", api.ResponseViewSet, basename="response")
router.register("import-reports", api.ImportReportViewSet, basename="import-report")
router.register("annotations", api_labels.LabelViewSet, basename="annotation")
router.register("assignments", api_labels.AssignmentViewSet, basename="assignment")
router.register("adjudications", api_labels.AdjudicationViewSet, basename="adjudication")
router.register("exports", api_export.ExportJobViewSet, basename="export")

urlpatterns = [
    path("import/", api.DatasetImportView.as_view(), name="api-import"),
    path("labels/next/", api_labels.NextView.as_view(), name="api-label-next"),
    path("labels/<str:response_id>/", api_labels.MyLabelView.as_view(), name="api-my-label"),
    path("labels/<str:response_id>/draft/", api_labels.DraftView.as_view(), name="api-label-draft"),
    path("agreement/", api_labels.AgreementView.as_view(), name="api-agreement"),
    path("adjudication/queue/", api_labels.AdjudicationQueueView.as_view(), name="api-adjudication-queue"),
    *router.urls,
]
