"""Reads of the export pages."""
from ..models import ExportJob


def recent_export_jobs(limit=20):
    """The newest export jobs, with who started them."""
    return ExportJob.objects.select_related("created_by")[:limit]
