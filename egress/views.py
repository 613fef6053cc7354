"""The provider-call log for admins: a page with filters and totals per host, and its JSON export."""
import json

from django.core.paginator import Paginator
from django.http import JsonResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext

from accounts.decorators import admin_required

from . import selectors
from .forms import CallFilterForm

PER_PAGE = 100


@admin_required
def call_log(request):
    """Every provider call: host, purpose, answer ids, bytes; filters that are not valid are shown and not applied."""
    form = CallFilterForm(request.GET)
    form.is_valid()
    selected = form.call_filter()
    queryset = selectors.calls(selected)
    page = Paginator(queryset, PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form, "page": page, "querystring": query.urlencode(),
        "by_host": selectors.totals_by_host(queryset), "by_purpose": selectors.totals_by_purpose(queryset),
        "hosts": selectors.known_hosts(),
    }
    return render(request, "egress/call_log.html", context)


@admin_required
def call_log_export(request):
    """The same calls as JSON, oldest first (a 400 names the filters that are not valid)."""
    form = CallFilterForm(request.GET)
    if not form.is_valid():
        return JsonResponse({"error": gettext("Some filters are not valid."), "fields": form.errors.get_json_data()},
                            status=400)
    selected = form.call_filter()
    queryset = selectors.calls(selected)
    head = {"exported": timezone.now().isoformat(), "filters": selected.as_dict(),
            "totals_by_host": selectors.totals_by_host(queryset)}

    def body():
        yield json.dumps(head)[:-1] + ', "calls": ['
        for n, row in enumerate(selectors.export_rows(queryset)):
            yield ("," if n else "") + json.dumps(row)
        yield "]}\n"

    response = StreamingHttpResponse(body(), content_type="application/json")
    response["Content-Disposition"] = 'attachment; filename="provider-calls.json"'
    return response
