"""Refuse page input that no field may hold, before any view reads it.

A NUL byte in a query parameter or a form field (``?q=a%00b``) is text to Python and to SQLite,
but PostgreSQL cannot store or compare it: psycopg raises on the query, and the page answered
500. No field of this app has a use for it, so a page request carrying one anywhere in its
query string or form fields (names or values) is answered 400 with a sentence saying why, the
same on every database. Uploaded files' contents are not looked at. The API (``/api/``) is left
to DRF, whose filters and serialisers already answer such input with a 400 naming the field,
after the role check (an annotator still gets 403 on a reviewer's endpoint).
"""
from django.http import HttpResponseBadRequest
from django.http.multipartparser import MultiPartParserError
from django.utils.translation import gettext as _

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _has_nul(query_dict):
    return any("\x00" in key or any("\x00" in value for value in values) for key, values in query_dict.lists())


def _form_fields(request):
    """The request's form fields, or None for a request without a form (or one Django cannot read:
    the view answers that as it always did)."""
    if request.method != "POST" or request.content_type not in FORM_TYPES:
        return None
    try:
        if request.content_type == FORM_TYPES[0]:
            request.body  # noqa: B018 - read (and kept) first: a view may still read the raw body after
        return request.POST  # parsed once; Django's CSRF check reads it for such a request too
    except MultiPartParserError:
        return None


class RefuseNulBytesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.path.startswith("/api/"):
            fields = _form_fields(request)
            if _has_nul(request.GET) or (fields is not None and _has_nul(fields)):
                return HttpResponseBadRequest(
                    _("The request holds a NUL byte (\\x00), which no field may contain; nothing was done."),
                    content_type="text/plain; charset=utf-8")
        return self.get_response(request)
