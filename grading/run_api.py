"""What every run's API has: ``progress`` (GET), ``cancel`` and ``resume`` (POST) on a run.

`RunActionsMixin` goes on the viewset of each kind of run (judge, generation, probe,
meta-evaluation and geometry runs), which names its `run_progress`, `cancel_run` and `resume_run` (functions
of a run); `run_data(run)` is what cancel and resume answer (the run serialised, by default).
"""
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.response import Response as ApiResponse

from . import runs


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

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        """Re-queue what has no finished result. Refused (409) while the run still makes progress,
        unless ``force`` is given (e.g. right after stopping a worker by hand)."""
        run = self.get_object()
        if not runs.may_resume(self.run_progress(run), request.data.get("force")):
            return ApiResponse({"detail": runs.RESUME_REFUSED}, status=status.HTTP_409_CONFLICT)
        return ApiResponse(self.run_data(self.resume_run(run)))
