from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from .models import Annotation, Exam, ImportReport, Question, Response, RubricCheckpoint, StepLabel, SubQuestion


class SubQuestionInline(admin.TabularInline):
    model = SubQuestion
    extra = 0


class RubricCheckpointInline(admin.TabularInline):
    model = RubricCheckpoint
    extra = 0
    fields = ["order", "cumulative_points", "sub_question", "start", "end"]


@admin.register(Exam)
class ExamAdmin(admin.ModelAdmin):
    list_display = ["name", "batch_date", "blind", "anchoring", "anchoring_setting", "created"]


@admin.register(Question)
class QuestionAdmin(SimpleHistoryAdmin):
    list_display = ["id", "location", "external_id", "kind", "level", "full_score", "exam"]
    list_filter = ["kind", "level", "exam"]
    search_fields = ["statement", "location", "external_id"]
    inlines = [SubQuestionInline, RubricCheckpointInline]


@admin.register(Response)
class ResponseAdmin(SimpleHistoryAdmin):
    list_display = ["id", "question", "source", "student_id", "status", "gold_score", "gold_status"]
    list_filter = ["source", "status", "gold_status", "question__exam"]
    search_fields = ["student_id", "transcript"]
    list_select_related = ["question"]
    raw_id_fields = ["question"]


class StepLabelInline(admin.TabularInline):
    model = StepLabel
    extra = 0


@admin.register(Annotation)
class AnnotationAdmin(SimpleHistoryAdmin):
    list_display = ["id", "response", "annotator", "total", "submitted", "is_imported", "version"]
    list_filter = ["submitted", "is_imported"]
    raw_id_fields = ["response"]
    inlines = [StepLabelInline]


admin.site.register(SubQuestion)
admin.site.register(RubricCheckpoint)
admin.site.register(ImportReport)
