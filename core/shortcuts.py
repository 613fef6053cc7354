"""The one way a page answers 404 for a missing row (the API uses DRF's get_object_or_404)."""
from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404
from django.shortcuts import get_object_or_404 as django_get_object_or_404

from core.numbers import parse_id


def get_object_or_404(klass, pk, **filters):
    """Django's get_object_or_404 by primary key; an id no database column can hold is a 404 too
    (SQLite would raise an overflow error on it, a 500)."""
    pk = parse_id(pk)
    if pk is None:
        raise Http404("No such object.")
    return django_get_object_or_404(klass, pk=pk, **filters)


def found_or_404(lookup, *args, message="No such object."):
    """What `lookup(*args)` finds: a selector that raises its model's DoesNotExist for a row that
    is not there (or not for this reader), which is a 404 here."""
    try:
        return lookup(*args)
    except ObjectDoesNotExist as exc:
        raise Http404(message) from exc
