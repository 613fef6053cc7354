"""REST API of labelling: labels with versions, drafts, the queue, assignments, agreement,
adjudication. Blind mode holds here as on the pages: an annotator gets other people's labels
and gold scores only once they submitted their own label (annotation.selectors.can_see_scores)."""

from django.db.models import Q
from django.http import Http404
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.generics import get_object_or_404
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from accounts.permissions import IsReviewer
from accounts.roles import is_reviewer

from ..models import Adjudication, Assignment, Label, Response
from ..selectors import can_see_scores, scores_visible_to
from . import selectors, services
from .agreement import agreement_report
from .rules import LabelInvalid
from .serializers import (
    AdjudicateRequestSerializer,
    AdjudicationQueueSerializer,
    AdjudicationSerializer,
    AssignmentSerializer,
    AssignRequestSerializer,
    LabelDraftSerializer,
    LabelSerializer,
    LabelWriteSerializer,
)


def _response_or_404(pk):
    return get_object_or_404(selectors.responses_with_rubric(), pk=pk)


def _save(request, response, label=None):
    """Parse a label save, run it, and answer 200/201, 400, 403 or 409 (with both versions)."""
    payload = LabelWriteSerializer(data=request.data)
    payload.is_valid(raise_exception=True)
    base_version = payload.validated_data["base_version"]
    try:
        result = services.save_label(
            response=response, user=request.user, data=payload.label_data(), base_version=base_version,
            submit=payload.validated_data["submit"], label=label,
            active_seconds_delta=payload.validated_data["active_seconds_delta"],
        )
    except services.NotAllowed as exc:
        raise PermissionDenied(str(exc)) from None
    except LabelInvalid as exc:
        return ApiResponse({"detail": "The label was not saved.", "errors": exc.errors}, status=400)
    except services.LabelConflict as exc:
        return ApiResponse(
            {
                "detail": str(exc),
                "yours": {"base_version": base_version, **payload.label_data()},
                "theirs": LabelSerializer(exc.current).data if exc.current else None,
            },
            status=status.HTTP_409_CONFLICT,
        )
    code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
    return ApiResponse(LabelSerializer(result.label).data, status=code)


class MyLabelView(APIView):
    """My label of a response (GET), saved with the version it was based on (PUT)."""

    @extend_schema(responses=LabelSerializer)
    def get(self, request, response_id):
        response = _response_or_404(response_id)
        mine = selectors.own_label(response, request.user)
        if mine is None and not selectors.can_label(request.user, response):
            raise PermissionDenied(gettext("This response is not assigned to you."))
        visible = can_see_scores(request.user, response)
        body = {
            "label": LabelSerializer(mine).data if mine else None,
            "scores_visible": visible,
        }
        if visible:
            others = selectors.labels_of_response(response, exclude_user=request.user)
            body["others"] = LabelSerializer(others, many=True).data
            body["gold_score"] = response.gold_score
            body["gold_status"] = response.gold_status
        return ApiResponse(body)

    @extend_schema(request=LabelWriteSerializer, responses={200: LabelSerializer, 201: LabelSerializer})
    def put(self, request, response_id):
        return _save(request, _response_or_404(response_id))


class DraftView(APIView):
    """Autosaved, unsaved work on a response's label (mine, or the one I edit as reviewer)."""

    def _draft(self, request, response_id):
        return selectors.own_draft(_response_or_404(response_id), request.user)

    @extend_schema(responses=LabelDraftSerializer)
    def get(self, request, response_id):
        draft = self._draft(request, response_id)
        if draft is None:
            return ApiResponse(status=status.HTTP_204_NO_CONTENT)
        return ApiResponse(LabelDraftSerializer(draft).data)

    @extend_schema(request=LabelDraftSerializer, responses=LabelDraftSerializer)
    def put(self, request, response_id):
        response = _response_or_404(response_id)
        # The serializer refuses a label id that is missing, of another response or not the
        # user's to edit with one message, so a draft is no oracle of which labels exist where.
        serializer = LabelDraftSerializer(data=request.data, context={"response": response, "user": request.user})
        serializer.is_valid(raise_exception=True)
        label = serializer.validated_data.get("label")
        try:
            draft = services.save_draft(
                response=response, user=request.user, payload=serializer.validated_data["payload"],
                base_version=serializer.validated_data["base_version"], label=label,
                active_seconds_delta=serializer.validated_data["active_seconds_delta"],
            )
        except services.NotAllowed as exc:
            raise PermissionDenied(str(exc)) from None
        except LabelInvalid as exc:
            return ApiResponse({"detail": "The draft was not kept.", "errors": exc.errors}, status=400)
        return ApiResponse(LabelDraftSerializer(draft).data)

    @extend_schema(responses={204: None})
    def delete(self, request, response_id):
        services.discard_draft(response=get_object_or_404(Response, pk=response_id), user=request.user)
        return ApiResponse(status=status.HTTP_204_NO_CONTENT)


class NextView(APIView):
    """Hand me my next unlabelled response, locked for me (204 when nothing is left)."""

    @extend_schema(request=None, responses={200: AssignmentSerializer, 204: None})
    def post(self, request):
        assignment = services.claim_next(request.user)
        if assignment is None:
            return ApiResponse(status=status.HTTP_204_NO_CONTENT)
        return ApiResponse(AssignmentSerializer(assignment).data)


class LabelViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Labels. Annotators list their own and, per response, the others once they may see them;
    opening a hidden label answers the same 404 as a missing one. PUT saves a label (its
    annotator, or a reviewer)."""

    serializer_class = LabelSerializer
    filterset_fields = ["response", "submitted", "is_imported"]
    lookup_value_regex = "[^/]+"  # any id reaches the role check; a malformed one is then a 404

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Label.objects.none()
        queryset = Label.objects.select_related("annotator", "updated_by", "response__question__exam")
        queryset = queryset.prefetch_related("step_labels__sub_question").order_by("pk")
        visible = scores_visible_to(self.request.user, via="response__")
        if self.action != "list" or visible is None:
            return queryset
        return queryset.filter(Q(annotator=self.request.user) | visible)

    def filter_queryset(self, queryset):
        # Filters select lists. On one label they would answer 404 or 403 by its hidden fields.
        return super().filter_queryset(queryset) if self.action == "list" else queryset

    def get_object(self):
        # A hidden label answers exactly as a missing one (blind mode): a 403 would tell an
        # annotator which ids are labels of answers others have labelled.
        try:
            label = super().get_object()
        except Http404:
            label = None
        user = self.request.user
        if label is None or (label.annotator_id != user.pk and not can_see_scores(user, label.response)):
            raise NotFound(gettext("No label with this id."))
        return label

    @extend_schema(request=LabelWriteSerializer, responses=LabelSerializer)
    def update(self, request, pk=None):
        label = self.get_object()
        return _save(request, _response_or_404(label.response_id), label=label)

    @extend_schema(responses={200: None})
    @action(detail=True)
    def history(self, request, pk=None):
        """Every version (who, when, what changed) and every save attempt with its outcome."""
        events = selectors.label_history(self.get_object())
        return ApiResponse({"events": events})


class AssignmentViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Assignments: an annotator sees their own; reviewers see all and assign in bulk."""

    serializer_class = AssignmentSerializer
    filterset_fields = ["response", "annotator", "strategy"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Assignment.objects.none()
        queryset = Assignment.objects.select_related("annotator", "lock_holder").order_by("response_id", "pk")
        if is_reviewer(self.request.user):
            return queryset
        return queryset.filter(annotator=self.request.user)

    @extend_schema(request=AssignRequestSerializer, responses={201: None})
    @action(detail=False, methods=["post"], permission_classes=[IsReviewer])
    def bulk(self, request):
        """Ask for k labels per response of a question or an exam (round-robin, least-loaded, open)."""
        serializer = AssignRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            result = services.assign_responses(
                responses=selectors.assignable_responses(data.get("question"), data.get("exam"), data.get("source")),
                annotators=data.get("annotators", []), per_response=data["per_response"],
                strategy=data["strategy"], assigned_by=request.user,
            )
        except LabelInvalid as exc:
            return ApiResponse({"detail": "Nothing was assigned.", "errors": exc.errors}, status=400)
        return ApiResponse(result.__dict__, status=status.HTTP_201_CREATED)


def _threshold(request):
    return selectors.adjudication_threshold(request.query_params.get("threshold"))


class AgreementView(APIView):
    """Agreement overall, per question and per annotator pair, and the annotator matrix."""

    permission_classes = [IsReviewer]

    @extend_schema(
        parameters=[
            OpenApiParameter("question", int), OpenApiParameter("exam", int), OpenApiParameter("source", str),
            OpenApiParameter("imported", bool, description="Count imported gold as a rater (default yes)."),
        ],
        responses={200: None},
    )
    def get(self, request):
        include_imported = request.query_params.get("imported", "1") not in ("0", "false", "no")
        ratings, full_scores, names = selectors.agreement_ratings(request.query_params, include_imported=include_imported)
        return ApiResponse(agreement_report(ratings, full_scores, names))


class AdjudicationQueueView(generics.ListAPIView):
    """Responses whose labels differ by at least `threshold` points (default 2), not adjudicated."""

    permission_classes = [IsReviewer]
    serializer_class = AdjudicationQueueSerializer
    filter_backends = []

    @extend_schema(parameters=[OpenApiParameter("threshold", float), OpenApiParameter("question", int), OpenApiParameter("exam", int)])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        return selectors.adjudication_queue(_threshold(self.request), self.request.query_params)


class AdjudicationViewSet(mixins.ListModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Adjudications (reviewers): pick a label or enter a gold score with a reason."""

    permission_classes = [IsReviewer]
    serializer_class = AdjudicationSerializer
    filterset_fields = ["response", "reviewer"]
    queryset = Adjudication.objects.select_related("reviewer").order_by("-created", "-pk")

    @extend_schema(request=AdjudicateRequestSerializer, responses={201: AdjudicationSerializer})
    def create(self, request):
        serializer = AdjudicateRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        response = data["response"]
        expected = None
        if "expected_gold_status" in data:
            expected = (data.get("expected_gold_score"), data["expected_gold_status"])
        try:
            adjudication = services.adjudicate(
                response=response, reviewer=request.user, reason=data["reason"], gold_score=data.get("gold_score"),
                chosen_label=data.get("chosen_label"), expected=expected, sub_scores=data.get("sub_scores"),
            )
        except LabelInvalid as exc:
            return ApiResponse({"detail": "No gold score was set.", "errors": exc.errors}, status=400)
        except services.GoldConflict as exc:
            current = exc.response
            return ApiResponse(
                {"detail": str(exc), "gold_score": current.gold_score, "gold_status": current.gold_status},
                status=status.HTTP_409_CONFLICT,
            )
        return ApiResponse(AdjudicationSerializer(adjudication).data, status=status.HTTP_201_CREATED)
