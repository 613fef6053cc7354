"""API error handling: DRF's own, plus a clear 409 when a delete would orphan protected data."""
from django.db.models import ProtectedError, RestrictedError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    if isinstance(exc, (ProtectedError, RestrictedError)):
        kinds = sorted({str(obj._meta.verbose_name_plural) for obj in exc.protected_objects} if isinstance(exc, ProtectedError) else set())
        detail = "This object is still in use and cannot be deleted"
        return Response(
            {"detail": f"{detail} ({', '.join(kinds)} refer to it)." if kinds else f"{detail}."},
            status=status.HTTP_409_CONFLICT,
        )
    return drf_exception_handler(exc, context)
