"""What every run's API has: ``progress`` (GET), ``cancel`` and ``resume`` (POST) on a run.

`RunActionsMixin` goes on the viewset of each kind of run (judge, generation, probe,
meta-evaluation and geometry runs), which names its `run_progress`, `cancel_run` and `resume_run` (functions
of a run); `run_data(run)` is what cancel and resume answer (the run serialised, by default).
"""
from django.utils.translation import gettext, gettext_lazy
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response as ApiResponse

from .engine import RESUME_REFUSED, may_resume


class ResumeSerializer(serializers.Serializer):
    force = serializers.BooleanField(
        required=False, default=False,
        help_text=gettext_lazy("Resume even while the run still makes progress (e.g. right after stopping a worker by hand)."))


# A comment, not a docstring: the schema would show it on every viewset.
class RunActionsMixin:
    def run_data(self, run):
        return self.get_serializer(run).data

    @extend_schema(request=None)
    @action(detail=True, methods=["get"])
    def progress(self, request, pk=None):
        return ApiResponse(self.run_progress(self.get_object()))

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        return ApiResponse(self.run_data(self.cancel_run(self.get_object())))

    @extend_schema(request=ResumeSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        """Re-queue what has no finished result. Refused (409) while the run still makes progress,
        unless ``force`` is given (e.g. right after stopping a worker by hand). The body is empty or
        a JSON object; anything else (a list, a string, null) is a 400, as is a `force` that is
        not true or false."""
        run = self.get_object()
        if not isinstance(request.data, dict):
            return ApiResponse({"detail": gettext("Send a JSON object, such as {\"force\": true}, or nothing.")},
                               status=status.HTTP_400_BAD_REQUEST)
        options = ResumeSerializer(data=request.data)
        options.is_valid(raise_exception=True)
        if not may_resume(self.run_progress(run), options.validated_data["force"]):
            return ApiResponse({"detail": RESUME_REFUSED}, status=status.HTTP_409_CONFLICT)
        return ApiResponse(self.run_data(self.resume_run(run)))
