"""Reading the provider-call log: the calls a filter selects, their totals per host, the export rows."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db.models import Count, QuerySet, Sum

from . import purposes
from .models import ProviderCall

UNLABELLED_PARAM = "unlabelled"  # the URL's word for the empty purpose code

EXPORT_FIELDS = ["id", "started", "host", "method", "path", "purpose", "answer_ids", "page_ids", "bytes_sent",
                 "bytes_received", "status", "error", "duration_ms"]


@dataclass(frozen=True)
class CallFilter:
    """The one set of filters of the log page and its JSON export (None: not filtered)."""

    purpose: str | None = None  # a purpose code; "" selects the unlabelled calls
    host: str | None = None
    since: date | None = None  # inclusive, in the site's time zone
    until: date | None = None  # inclusive

    def as_dict(self):
        return {"purpose": self.purpose, "host": self.host, "since": self.since.isoformat() if self.since else None,
                "until": self.until.isoformat() if self.until else None}


def calls(selected: CallFilter) -> QuerySet:
    queryset = ProviderCall.objects.all()
    if selected.purpose is not None:
        queryset = queryset.filter(purpose=selected.purpose)
    if selected.host:
        queryset = queryset.filter(host=selected.host)
    if selected.since:
        queryset = queryset.filter(started__date__gte=selected.since)
    if selected.until:
        queryset = queryset.filter(started__date__lte=selected.until)
    return queryset.order_by("-started", "-id")


def totals_by_host(queryset: QuerySet) -> list[dict]:
    """Per host: calls, bytes sent and received; the host sent most to first."""
    rows = (queryset.order_by().values("host")
            .annotate(calls=Count("id"), bytes_sent=Sum("bytes_sent"), bytes_received=Sum("bytes_received"))
            .order_by("-bytes_sent", "host"))
    return [{"host": r["host"], "calls": r["calls"], "bytes_sent": r["bytes_sent"] or 0,
             "bytes_received": r["bytes_received"] or 0} for r in rows]


def totals_by_purpose(queryset: QuerySet) -> list[dict]:
    labels = dict(purposes.CHOICES)
    rows = (queryset.order_by().values("purpose")
            .annotate(calls=Count("id"), bytes_sent=Sum("bytes_sent"), bytes_received=Sum("bytes_received"))
            .order_by("-bytes_sent", "purpose"))
    return [{"purpose": r["purpose"], "label": labels.get(r["purpose"], r["purpose"]), "calls": r["calls"],
             "bytes_sent": r["bytes_sent"] or 0, "bytes_received": r["bytes_received"] or 0} for r in rows]


def known_hosts() -> list[str]:
    return list(ProviderCall.objects.order_by("host").values_list("host", flat=True).distinct()[:500])


def export_rows(queryset: QuerySet):
    """The export's call rows, oldest first, read in chunks (a study's log may hold millions)."""
    for row in queryset.order_by("started", "id").values(*EXPORT_FIELDS).iterator(chunk_size=2000):
        row["started"] = row["started"].isoformat()
        yield row
