from django.contrib import admin

from .models import OcrRun, Page, ScanBatch, ScanFile, Transcript, TranscriptRevision


class ScanFileInline(admin.TabularInline):
    model = ScanFile
    extra = 0
    fields = ["original_name", "detected_format", "size", "status", "message"]
    readonly_fields = fields


@admin.register(ScanBatch)
class ScanBatchAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "exam", "engine", "created_by", "created"]
    list_filter = ["engine", "exam"]
    inlines = [ScanFileInline]


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    list_display = ["id", "batch", "student_id", "question", "page_number", "status", "response"]
    list_filter = ["status", "batch"]
    search_fields = ["student_id", "checksum"]
    raw_id_fields = ["batch", "source_file", "question", "response"]


@admin.register(OcrRun)
class OcrRunAdmin(admin.ModelAdmin):
    list_display = ["id", "page", "engine", "status", "seconds", "cer_edits", "cer_length"]
    list_filter = ["engine", "status"]
    raw_id_fields = ["page"]
    exclude = ["tokens"]


class TranscriptRevisionInline(admin.TabularInline):
    model = TranscriptRevision
    extra = 0
    fields = ["version", "kind", "author", "updated", "text"]
    readonly_fields = fields


@admin.register(Transcript)
class TranscriptAdmin(admin.ModelAdmin):
    list_display = ["id", "page", "version", "status", "updated_by", "updated"]
    list_filter = ["status"]
    raw_id_fields = ["page", "source_run"]
    inlines = [TranscriptRevisionInline]
