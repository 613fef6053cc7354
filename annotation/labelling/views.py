"""Labelling pages: my queue, the labelling screen, label history, assignment, agreement and
adjudication. Thin: they read through selectors and write through services; the labelling
screen saves through the API (annotation.labelling.api) from the modules in static/js/labelling/."""
from decimal import Decimal, InvalidOperation

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods, require_POST

from accounts.decorators import admin_required, annotator_required, reviewer_required
from accounts.roles import is_admin, is_reviewer
from accounts.selectors import active_annotators
from core.ids import id_param
from core.numbers import parse_id
from core.shortcuts import found_or_404, get_object_or_404

from ..models import Assignment, Question, Response, StepLabel
from ..selectors import can_see_scores, exam_by_id, exam_choices, question_by_id, question_choices, reference_segments
from . import scans as scan_panel
from . import selectors, services
from .agreement import MATRIX_METRICS, agreement_report
from .forms import AnchoringForm
from .rules import LabelInvalid, rubric_groups
from .serializers import LabelDraftSerializer, LabelSerializer


@annotator_required
def label_queue(request):
    state = request.GET.get("state") if request.GET.get("state") in selectors.QUEUE_STATES else "todo"
    page = Paginator(selectors.queue_of(request.user, state), 50).get_page(request.GET.get("page"))
    counts = selectors.queue_counts(request.user)
    context = {
        "page": page,
        "rows": selectors.queue_rows(request.user, page.object_list),
        "state": state,
        "states": selectors.QUEUE_STATES,
        "querystring": f"state={state}",
        "held": selectors.held_open_slots(request.user),
        "counts": counts,
        "percent": round(100 * counts["done"] / counts["total"]) if counts["total"] else 0,
        "lock_minutes": int(services.LOCK_TTL.total_seconds() // 60),
    }
    return render(request, "annotation/label_queue.html", context)


@annotator_required
@require_POST
def label_next(request):
    """Hand out the next unlabelled response (locked) and open it; reviewers without a queue
    move on to the next response of the same question."""
    assignment = services.claim_next(request.user)
    if assignment is not None:
        return redirect("annotation:label", pk=assignment.response_id)
    after = id_param(request.POST.get("after"))
    if after is not None and is_reviewer(request.user):
        response = selectors.response_in_question(after)
        if response is not None:
            _, following = selectors.neighbours(request.user, response)
            if following:
                return redirect("annotation:label", pk=following)
    messages.info(request, gettext("Nothing left to label in your queue. Thank you!"))
    return redirect("annotation:label_queue")


@annotator_required
def label_response(request, pk):
    """The labelling screen for one response: problem, rubric, transcript and the score form."""
    response = found_or_404(selectors.label_page_response, pk, message="No such response.")
    user = request.user
    label = _edited_label(request, response)
    if label is None and not selectors.can_label(user, response):
        raise PermissionDenied(gettext("This response is not assigned to you. Use “Next” on your queue."))
    editable = selectors.can_edit_label(user, label) if label else True
    can_see = can_see_scores(user, response)
    anchor = selectors.anchor_for(user, response)
    anchor = anchor if anchor and anchor["shown"] else None  # the hidden half gets nothing, not even a hidden value
    others = [a for a in selectors.labels_of_response(response) if a.pk != getattr(label, "pk", None)] if can_see else []
    draft = selectors.own_draft(response, user)
    if draft is not None and draft.label_id != getattr(label, "pk", None):
        draft = None
    question = response.question
    by_question = _class_position(request, response)
    if by_question:
        previous, following = by_question["previous"], by_question["following"]
    else:
        previous, following = selectors.neighbours(user, response)
    suffix = f"?by_question={question.pk}" if by_question else ""
    scans = scan_panel.response_scans(response)
    config = {
        "responseId": response.pk,
        "transcript": response.transcript,
        "transcriptHash": response.transcript_hash,
        "fullScore": str(question.full_score),
        "groups": _groups_config(question),
        "label": LabelSerializer(label).data if label else None,
        "draft": LabelDraftSerializer(draft).data if draft else None,
        "editable": editable,
        "ownLabel": label is None or label.annotator_id == user.pk,
        "activeIdleSeconds": services.ACTIVE_IDLE_SECONDS,
        "verdicts": StepLabel.Verdict.choices,
        "urls": {
            "save": reverse("api-my-label", args=[response.pk])
            if label is None or label.annotator_id == user.pk
            else reverse("annotation-detail", args=[label.pk]),
            "draft": reverse("api-label-draft", args=[response.pk]),
            "flag": scan_panel.flag_url(response) if scans else None,
            "previous": reverse("annotation:label", args=[previous]) + suffix if previous else None,
            "next": reverse("annotation:label", args=[following]) + suffix if by_question and following else None,
            "page": reverse("annotation:label", args=[response.pk])
            + (f"?annotation={label.pk}" if label and label.annotator_id != user.pk else suffix),
        },
    }
    context = {
        "response": response,
        "question": question,
        "segments": reference_segments(question),
        "label": label,
        "editable": editable,
        "can_see_scores": can_see,
        "anchor": anchor,
        "others": others,
        "config": config,
        "counts": selectors.queue_counts(user),
        "previous": previous,
        "following": following,
        "by_question": by_question,
        "nav_suffix": suffix,
        "scans": scans,
        "review_steps": selectors.steps_needing_review(label, response.transcript),
        "transcript_changed": bool(label and label.transcript_hash and label.transcript_hash != response.transcript_hash),
    }
    return render(request, "annotation/label.html", context)


def _class_position(request, response):
    """With ?by_question=<this response's question>, the grading-across-the-class position."""
    if id_param(request.GET.get("by_question")) != response.question_id:
        return None
    return selectors.class_position(request.user, response)


@annotator_required
def label_question(request, pk):
    """Grade one question across the class: open its first response still to grade, by student."""
    question = get_object_or_404(Question, pk=pk)
    first = selectors.first_to_grade(request.user, question.pk)
    if first is None:
        messages.info(request, gettext("No response to question %(value)s is assigned to you.") % {"value": question.location or question.pk})
        return redirect("annotation:label_queue")
    return redirect(reverse("annotation:label", args=[first]) + f"?by_question={question.pk}")


def _edited_label(request, response):
    """The label this page edits: ?annotation=<id> for a reviewer, else the user's own."""
    wanted = id_param(request.GET.get("annotation"))
    if wanted is not None and is_reviewer(request.user):
        return get_object_or_404(selectors.labels_with_history(), pk=wanted, response=response)
    return selectors.own_label(response, request.user)


def _groups_config(question):
    return [
        {
            "label": group.label,
            "max": str(group.max_points) if group.max_points is not None else None,
            "checkpoints": [
                {"id": c.id, "points": str(c.points), "cumulative": str(c.cumulative), "text": c.text[:400],
                 "worth": str(c.worth), "out_of": None if c.out_of is None else str(c.out_of)}
                for c in group.checkpoints
            ],
        }
        for group in rubric_groups(question)
    ]


@annotator_required
def label_history(request, pk):
    """History of the labels of a response the user may see: versions, step labels, attempts."""
    response = get_object_or_404(selectors.responses_with_exam(), pk=pk)
    labels = selectors.labels_of_response(response)
    if not can_see_scores(request.user, response):
        labels = [a for a in labels if a.annotator_id == request.user.pk]
        if not labels:
            raise PermissionDenied(gettext("Blind mode: you have no label on this response yet."))
    histories = [{"label": a, "events": selectors.label_history(a)} for a in labels]
    return render(request, "annotation/label_history.html", {"response": response, "histories": histories})


# --- reviewers ------------------------------------------------------------------------------


@reviewer_required
@require_http_methods(["GET", "POST"])
def assign(request):
    annotators = list(active_annotators())
    if request.method == "POST":
        _assign_from_form(request, annotators)
        return redirect(f"{reverse('annotation:assign')}?{_assign_choices(request.POST).urlencode()}")
    choices = _assign_choices(request.GET)
    context = {
        "choices": choices,
        "chosen_annotators": set(choices.getlist("annotators")) if "annotators" in choices else None,
        "annotators": annotators,
        "questions": question_choices(),
        "exams": exam_choices(),
        "batches": scan_panel.scan_batches_to_assign(),
        "strategies": Assignment.Strategy.choices,
        "sources": Response.Source.choices,
        "overview": selectors.assignment_overview(),
    }
    return render(request, "annotation/assign.html", context)


ASSIGN_FIELDS = ("question", "exam", "batch", "source", "per_response", "strategy")


def _assign_choices(data):
    """The assign form's choices from a POST or the query string, so the form keeps them after a submit."""
    choices = QueryDict(mutable=True)
    for name in ASSIGN_FIELDS:
        if data.get(name):
            choices[name] = str(data[name])[:20]
    if data.get("per_response") or data.getlist("annotators"):  # the form was sent: keep its ticks, even none
        choices.setlist("annotators", [value[:20] for value in data.getlist("annotators")] or [""])
    return choices


def _assign_from_form(request, annotators):
    post = request.POST
    question_id, exam_id = id_param(post.get("question")), id_param(post.get("exam"))
    question, exam = question_by_id(question_id), exam_by_id(exam_id)
    batch_id = id_param(post.get("batch"))
    batch = scan_panel.scan_batch(batch_id) if batch_id is not None else None
    if question is None and exam is None and batch is None:
        messages.error(request, gettext("Choose a question, an exam or a scan batch: nothing was changed."))
        return
    responses = selectors.assignable_responses(question, exam, post.get("source"), batch=batch)
    chosen = [u for u in annotators if str(u.pk) in post.getlist("annotators")]
    if post.get("action") == "withdraw":
        removed = services.withdraw_assignments(responses=responses, annotators=chosen or None)
        messages.success(request, gettext("Withdrew %(removed)s unstarted assignment(s).") % {"removed": removed})
        return
    try:
        per_response = int(post.get("per_response", "2"))
        result = services.assign_responses(
            responses=responses, annotators=chosen, per_response=per_response,
            strategy=post.get("strategy", Assignment.Strategy.ROUND_ROBIN), assigned_by=request.user,
        )
    except ValueError as exc:  # LabelInvalid is a ValueError
        messages.error(request, gettext("Nothing was assigned. %(exc)s") % {"exc": exc})
        return
    messages.success(request, result.summary())
    if result.short_of_annotators:
        messages.warning(request, gettext("%(short_of_annotators)s label(s) could not be given out: too few annotators.") % {"short_of_annotators": result.short_of_annotators})


@reviewer_required
def agreement(request):
    include_imported = request.GET.get("imported", "1") != "0"
    ratings, full_scores, names = selectors.agreement_ratings(request.GET, include_imported=include_imported)
    report = agreement_report(ratings, full_scores, names)
    metric = request.GET.get("metric") if request.GET.get("metric") in MATRIX_METRICS else "kappa"
    matrix = [
        {"rater": rater, "cells": [{"value": v, "other": report["raters"][j]} for j, v in enumerate(row)]}
        for rater, row in zip(report["raters"], report["matrix"][metric])
    ]
    context = {
        "report": report,
        "matrix": matrix,
        "metric": metric,
        "metric_lower_is_better": metric == "mad",
        "metrics": MATRIX_METRICS,
        "filters": request.GET,
        "include_imported": include_imported,
        "work": selectors.work_time(request.GET),
        "anchoring": selectors.anchoring_table(selectors.anchoring_labels(request.GET)),
        "questions": question_choices(),
        "exams": exam_choices(),
    }
    return render(request, "annotation/agreement.html", context)


def _threshold(request):
    return selectors.adjudication_threshold(request.GET.get("threshold"))


@reviewer_required
def adjudication_queue(request):
    threshold = _threshold(request)
    page = Paginator(selectors.adjudication_queue(threshold, request.GET), 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page, "threshold": threshold, "filters": request.GET, "querystring": query.urlencode(),
        "questions": question_choices(),
    }
    return render(request, "annotation/adjudication_queue.html", context)


@reviewer_required
@require_http_methods(["GET", "POST"])
def adjudicate(request, pk):
    response = get_object_or_404(selectors.responses_with_rubric(), pk=pk)
    labels = selectors.submitted_labels(response)
    errors = {}
    if request.method == "POST":
        errors = _adjudicate_from_form(request, response, labels)
        if not errors:
            return redirect(_next_in_adjudication(request, response))
    threshold = _threshold(request)
    context = {
        "response": response,
        "question": response.question,
        "labels": labels,
        "groups": rubric_groups(response.question),
        "errors": errors,
        "form": request.POST,
        "threshold": threshold,
        "adjudications": response.adjudications.select_related("reviewer", "chosen_label__annotator")[:20],
        "scans": scan_panel.response_scans(response),
        "spread": (max(a.total for a in labels) - min(a.total for a in labels)) if len(labels) > 1 else None,
    }
    return render(request, "annotation/adjudicate.html", context, status=400 if errors else 200)


def _adjudicate_from_form(request, response, labels):
    post = request.POST
    chosen = next((a for a in labels if str(a.pk) == post.get("chosen")), None)
    seen_score = post.get("seen_gold_score") or None
    subs = [g.label for g in rubric_groups(response.question) if g.label]
    sub_scores = {label: post.get(f"sub:{label}", "").strip() for label in subs}
    sub_scores = {label: value for label, value in sub_scores.items() if value}
    own_total = post.get("gold_score") or None
    try:
        own = own_total is not None and (chosen is None or Decimal(own_total) != chosen.total)
    except InvalidOperation:
        own = False  # the service says "Not a number."
    if subs and own and not sub_scores:
        # A total of her own needs its breakdown, or the release export loses sub_question_scores.
        errors = {}
        try:
            services.check_adjudicated_score(response, own_total, chosen, post.get("reason", ""))
        except LabelInvalid as exc:
            errors = dict(exc.errors)
        return {**errors, "sub_scores": [gettext("Give the points per sub-question (%(labels)s): they are what the release "
                                     "export's sub_question_scores hold; the gold score is their sum.")
                           % {"labels": ", ".join(subs)}]}
    try:
        expected = (Decimal(seen_score) if seen_score else None, post.get("seen_gold_status", response.gold_status))
        services.adjudicate(
            response=response, reviewer=request.user, reason=post.get("reason", ""),
            gold_score=own_total, chosen_label=chosen, expected=expected, sub_scores=sub_scores,
        )
    except LabelInvalid as exc:
        return exc.errors
    except services.GoldConflict as exc:
        return {"conflict": [str(exc)]}
    except InvalidOperation:
        return {"gold_score": ["Not a number."]}
    messages.success(request, gettext("Gold score of response %(pk)s set.") % {"pk": response.pk})
    return {}


def _next_in_adjudication(request, response):
    following = (
        selectors.adjudication_queue(_threshold(request)).exclude(pk=response.pk).values_list("pk", flat=True).first()
    )
    if following:
        return reverse("annotation:adjudicate", args=[following])
    return reverse("annotation:adjudication_queue")


def exam_anchoring_context(exam, user, form=None):
    """The exam page's anchoring panel (reviewers and admins): its state, progress and results for
    the current setting and seed, and (admins) the form that starts it."""
    if not is_reviewer(user):
        return None
    choices = selectors.anchoring_setting_choices(exam)
    if form is None:
        initial = {"setting": exam.anchoring_setting} if exam.anchoring_setting else {}
        if exam.anchoring_setting:
            initial["seed"] = exam.anchoring_seed
        form = AnchoringForm(choices=choices, initial=initial)
    has_run = bool(exam.anchoring_setting)
    labels = selectors.anchoring_labels({"exam": exam.pk}, setting=exam.anchoring_setting,
                                        seed=exam.anchoring_seed) if has_run else []
    return {
        "form": form if is_admin(user) else None, "choices": choices,
        "progress": selectors.anchoring_progress(exam) if has_run else None,
        "table": selectors.anchoring_table(labels),
    }


@admin_required
@require_POST
def exam_anchoring(request, pk):
    """Start (or change) or stop the anchoring experiment of one exam, from the exam page."""
    exam = exam_by_id(parse_id(pk))
    if exam is None:
        raise Http404("No such exam.")
    if request.POST.get("action") == "stop":
        services.stop_anchoring(exam=exam)
        messages.success(request, gettext("The anchoring experiment is stopped: no pre-grade is shown any more."))
        return redirect(reverse("annotation:exam_detail", args=[exam.pk]) + "#anchoring")
    form = AnchoringForm(request.POST, choices=selectors.anchoring_setting_choices(exam))
    if form.is_valid():
        try:
            services.start_anchoring(exam=exam, setting=form.cleaned_data["setting"], seed=form.cleaned_data["seed"])
        except services.AnchoringInvalid as exc:
            form.add_error("setting", str(exc))
        else:
            messages.success(request, gettext("The anchoring experiment runs: the pre-grade of “%(setting)s” is shown to half of the assignments (seed %(seed)s).") % {
                "setting": exam.anchoring_setting, "seed": exam.anchoring_seed})
            return redirect(reverse("annotation:exam_detail", args=[exam.pk]) + "#anchoring")
    # Nothing changed; the page opens again with the reasons (a choice and a number: nothing typed is lost).
    for field, errors in form.errors.items():
        label = form.fields[field].label if field in form.fields else ""
        for error in errors:
            messages.error(request, f"{label}: {error}" if label else error)
    return redirect(reverse("annotation:exam_detail", args=[exam.pk]) + "#anchoring")
