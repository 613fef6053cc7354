"""Django admin for the judges. Used settings are read-only here too: edit them in the app."""
from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from .judges import services
from .models import GenerationItem, GenerationRun, JudgeResult, JudgeRun, JudgeSetting, LlmEndpoint


@admin.register(LlmEndpoint)
class LlmEndpointAdmin(SimpleHistoryAdmin):
    list_display = ("name", "base_url", "api_key_env", "max_concurrency", "requests_per_minute", "tokens_per_minute")
    search_fields = ("name", "base_url")


@admin.register(JudgeSetting)
class JudgeSettingAdmin(admin.ModelAdmin):
    list_display = ("name", "version", "kind", "model", "endpoint", "temperature", "samples", "created")
    list_filter = ("kind",)
    search_fields = ("name", "model")

    def has_change_permission(self, request, obj=None):
        if obj is not None and services.setting_is_used(obj):
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and services.setting_is_used(obj):
            return False
        return super().has_delete_permission(request, obj)


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ("id", "setting", "status", "epoch", "n_items", "created", "finished")
    list_filter = ("status",)
    readonly_fields = [f.name for f in JudgeRun._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(JudgeResult)
class JudgeResultAdmin(admin.ModelAdmin):
    list_display = ("id", "setting", "response", "status", "score", "parse_status", "attempts", "latency_ms")
    list_filter = ("status", "parse_status", "setting__kind")
    raw_id_fields = ("response", "run", "copied_from")
    readonly_fields = [f.name for f in JudgeResult._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(GenerationRun)
class GenerationRunAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "endpoint", "status", "n_items", "created")
    readonly_fields = [f.name for f in GenerationRun._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(GenerationItem)
class GenerationItemAdmin(admin.ModelAdmin):
    list_display = ("id", "run", "question", "model", "temperature", "student_id", "state")
    list_filter = ("state",)
    raw_id_fields = ("run", "question", "response")
    readonly_fields = [f.name for f in GenerationItem._meta.fields]

    def has_add_permission(self, request):
        return False
