"""Refuse request input that no field may hold, before any view reads it.

A NUL byte in a query parameter or a form field (``?q=a%00b``) is text to Python and to SQLite,
but PostgreSQL cannot store or compare it: psycopg raises on the query, and the page answered
500. No field of this app has a use for it, so a request carrying one anywhere in its query
string or form fields (names or values) is answered 400 with a sentence saying why, the same on
every database; the API answers the same in JSON. Uploaded files' contents are not looked at.
"""
from django.http import HttpResponseBadRequest, JsonResponse
from django.utils.translation import gettext as _


def _has_nul(query_dict):
    return any("\x00" in key or any("\x00" in value for value in values) for key, values in query_dict.lists())


class RefuseNulBytesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        fields = None
        if request.method == "POST" and request.content_type == "application/x-www-form-urlencoded":
            request.body  # noqa: B018 - read (and kept) first: a view may still read the raw body after
            fields = request.POST
        elif request.method == "POST" and request.content_type == "multipart/form-data":
            fields = request.POST  # parsed once; Django's CSRF check reads it for such a request too
        if _has_nul(request.GET) or (fields is not None and _has_nul(fields)):
            message = _("The request holds a NUL byte (\\x00), which no field may contain; nothing was done.")
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": message}, status=400)
            return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
