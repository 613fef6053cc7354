from django.contrib import admin

from .models import ProviderCall


@admin.register(ProviderCall)
class ProviderCallAdmin(admin.ModelAdmin):
    """Read-only: the log is written by the transport's observer, never by hand."""

    list_display = ("started", "host", "purpose", "method", "path", "status", "bytes_sent", "bytes_received",
                    "duration_ms")
    list_filter = ("purpose", "host", "status")
    search_fields = ("host", "path")
    date_hierarchy = "started"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
