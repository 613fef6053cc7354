"""REST API of generation runs (/api/generation-runs/): start one, list them, follow, cancel or
resume a run. Reviewers and admins."""
from rest_framework import serializers, viewsets

from accounts.permissions import IsReviewer
from annotation.models import Question
from core.ids import MAX_ID

from ..judges.api import ID, IdRelatedField, StartRunMixin
from ..runs.api import RunActionsMixin
from . import selectors, services
from .models import GenerationRun


class GenerationRunSerializer(serializers.ModelSerializer):
    serializer_related_field = IdRelatedField
    questions = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID), write_only=True, allow_empty=False, max_length=10000
    )

    class Meta:
        model = GenerationRun
        fields = [
            "id", "name", "endpoint", "model_names", "temperatures", "per_cell", "system_prompt", "prompt_template",
            "max_tokens", "price_input_per_1k", "price_output_per_1k", "status", "epoch", "n_items", "created",
            "finished", "questions",
        ]
        read_only_fields = ["status", "epoch", "n_items", "created", "finished"]
        extra_kwargs = {"prompt_template": {"required": False}, "system_prompt": {"required": False}}


class GenerationRunViewSet(RunActionsMixin, StartRunMixin, viewsets.ReadOnlyModelViewSet):
    serializer_class = GenerationRunSerializer
    permission_classes = [IsReviewer]
    lookup_value_regex = ID

    def get_queryset(self):
        return GenerationRun.objects.select_related("endpoint").order_by("-created")

    @staticmethod
    def start_run(data, user):
        return services.start_generation_run(
            endpoint=data["endpoint"], models=data["model_names"], temperatures=data["temperatures"],
            per_cell=data.get("per_cell", 1), questions=Question.objects.filter(pk__in=data["questions"]),
            prompt_template=data.get("prompt_template", ""), system_prompt=data.get("system_prompt"),
            max_tokens=data.get("max_tokens") or 4096, user=user, name=data.get("name", ""),
            price_input_per_1k=data.get("price_input_per_1k", 0), price_output_per_1k=data.get("price_output_per_1k", 0),
        )

    run_progress = staticmethod(selectors.generation_progress)
    cancel_run = staticmethod(services.cancel_generation_run)
    resume_run = staticmethod(services.resume_generation_run)
