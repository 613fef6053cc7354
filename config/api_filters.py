"""The API's filter backend: django-filter's, refusing query parameters it does not know.

A list endpoint with filters answers 400 to a parameter that is neither one of its filters nor
the page number (issue 28: `?setting=10` on `/api/judge-results/` was ignored silently and
returned every result, which a script then took as that setting's). Endpoints without a
filterset (they read their own parameters, e.g. the metrics report) are left as they are.
"""
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError


class StrictFilterBackend(DjangoFilterBackend):
    def get_filterset(self, request, queryset, view):
        filterset = super().get_filterset(request, queryset, view)
        if filterset is not None:
            known = set(filterset.form.fields) | _paging_parameters(view)
            unknown = sorted(set(request.query_params) - known)
            if unknown:
                listed = ", ".join(sorted(known))
                raise ValidationError({name: [f"Unknown parameter. This endpoint takes: {listed}."] for name in unknown})
        return filterset


def _paging_parameters(view) -> set[str]:
    paginator = getattr(view, "paginator", None)
    if paginator is None:
        return set()
    names = {getattr(paginator, "page_query_param", None), getattr(paginator, "page_size_query_param", None)}
    return {name for name in names if name}
