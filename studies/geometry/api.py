"""REST API of the error-geometry and step-surprisal runs (reviewers and admins): list them, read
one (its results, every figure), follow its progress, cancel or resume it (the actions every run
has: grading/runs/api.py). Runs are started on the page or with the commands."""
from rest_framework import serializers, viewsets

from accounts.permissions import IsReviewer
from grading.runs.api import RunActionsMixin

from . import selectors, services
from .models import GeometryRun


class GeometryRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = GeometryRun
        fields = ["id", "kind", "backend", "endpoint", "model", "selection", "params", "seed", "skipped", "status",
                  "epoch", "n_items", "analysis_state", "analysis_error", "analysed", "results", "created", "resumed",
                  "finished"]
        read_only_fields = fields


class GeometryRunViewSet(RunActionsMixin, viewsets.ReadOnlyModelViewSet):
    """Error-geometry and step-surprisal runs: read one with its figures, follow its progress
    (fetching, then the analysis), cancel it (an analysis under way stops too) or resume it."""

    serializer_class = GeometryRunSerializer
    permission_classes = [IsReviewer]
    lookup_value_regex = r"[0-9]{1,18}"
    queryset = GeometryRun.objects.order_by("-created", "-id")

    run_progress = staticmethod(selectors.run_progress)
    cancel_run = staticmethod(services.cancel_run)
    resume_run = staticmethod(services.resume_run)
