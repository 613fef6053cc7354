from django.urls import path
from rest_framework.routers import DefaultRouter

from . import api

router = DefaultRouter()
router.register("exams", api.ExamViewSet, basename="exam")
router.register("questions", api.QuestionViewSet, basename="question")
router.register("responses", api.ResponseViewSet, basename="response")
router.register("import-reports", api.ImportReportViewSet, basename="import-report")

urlpatterns = [path("import/", api.DatasetImportView.as_view(), name="api-import"), *router.urls]
