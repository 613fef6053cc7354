from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from .models import (
    Exam,
    ImportReport,
    Label,
    Question,
    Response,
    RubricCheckpoint,
    RubricVersion,
    StepLabel,
    SubQuestion,
)

# The rubric (reference solution, full score, checkpoints, sub-question maxima) changes only through
# annotation.services.edit_rubric, which versions it (the question's "Edit the rubric" page): the
# admin shows it read-only.
RUBRIC_FIELDS = ["reference_solution", "full_score", "rubric_version"]


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class SubQuestionInline(ReadOnlyInline):
    model = SubQuestion


class RubricCheckpointInline(ReadOnlyInline):
    model = RubricCheckpoint
    fields = ["order", "cumulative_points", "sub_question", "start", "end"]


@admin.register(Exam)
class ExamAdmin(admin.ModelAdmin):
    list_display = ["name", "batch_date", "blind", "anchoring", "anchoring_setting", "created"]


@admin.register(Question)
class QuestionAdmin(SimpleHistoryAdmin):
    list_display = ["id", "location", "external_id", "kind", "level", "full_score", "exam"]
    list_filter = ["kind", "level", "exam"]
    search_fields = ["statement", "location", "external_id"]
    readonly_fields = RUBRIC_FIELDS
    inlines = [SubQuestionInline, RubricCheckpointInline]


@admin.register(RubricVersion)
class RubricVersionAdmin(admin.ModelAdmin):
    list_display = ["question", "version", "full_score", "created_by", "created"]
    raw_id_fields = ["question"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


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


@admin.register(Label)
class LabelAdmin(SimpleHistoryAdmin):
    list_display = ["id", "response", "annotator", "total", "submitted", "is_imported", "version"]
    list_filter = ["submitted", "is_imported"]
    raw_id_fields = ["response"]
    inlines = [StepLabelInline]


admin.site.register(ImportReport)
