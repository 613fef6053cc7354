from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext, gettext_lazy, ngettext
from django.views.decorators.http import require_POST

from accounts.decorators import annotator_required, reviewer_required
from accounts.roles import is_reviewer
from core.numbers import parse_id
from core.shortcuts import found_or_404, get_object_or_404

from . import selectors, services
from .forms import DatasetImportForm, RubricEditForm
from .importers import ImportFormatError, pending
from .importers.placement import ExamOverlap
from .importers.services import IMPORTERS, create_import_job, import_pending, job_progress, runs_in_background
from .labelling.views import exam_anchoring_context
from .models import ImportJob, ImportReport, RubricVersion


@annotator_required
def home(request):
    return render(request, "annotation/home.html", selectors.dataset_counts())


@annotator_required
def question_list(request):
    return render(request, "annotation/question_list.html", {"questions": selectors.question_list()})


@annotator_required
def question_detail(request, pk):
    question = found_or_404(selectors.question_detail, pk, message="No such question.")
    return render(
        request,
        "annotation/question_detail.html",
        {"question": question, "segments": selectors.reference_segments(question),
         "rubric_versions": selectors.rubric_versions(question),
         "rubric": selectors.rubric_problems(question, with_data=is_reviewer(request.user))},
    )


@reviewer_required
def question_rubric_edit(request, pk):
    """Edit a question's rubric (reviewers): each saved change is a new rubric version."""
    question = get_object_or_404(selectors.questions_with_exam(), pk=pk)
    form = RubricEditForm(request.POST or None, question=question)
    if request.method == "POST" and form.is_valid():
        before = question.rubric_version
        try:
            question = services.edit_rubric(
                question, reference_solution=form.cleaned_data["reference_solution"],
                full_score=form.cleaned_data["full_score"], sub_question_max_points=form.sub_question_max_points(),
                user=request.user, note=form.cleaned_data["note"],
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            if question.rubric_version == before:
                messages.info(request, gettext("Nothing changed: the rubric stays at version %(before)s.") % {"before": before})
            else:
                messages.success(request, gettext("Saved as rubric version %(rubric_version)s.") % {"rubric_version": question.rubric_version})
            return redirect("annotation:question_detail", pk=question.pk)
    return render(request, "annotation/question_rubric_edit.html", {
        "question": question, "form": form, "rubric": selectors.rubric_problems(question, with_data=True),
    })


@reviewer_required
def question_rubric_version(request, pk, version):
    """One kept version of a question's rubric, as it was."""
    question = get_object_or_404(selectors.questions_with_exam(), pk=pk)
    try:
        if version > 2**31 - 1:  # beyond any version column
            raise RubricVersion.DoesNotExist
        kept = selectors.rubric_version(question, version)
    except RubricVersion.DoesNotExist as exc:
        raise Http404("No such rubric version.") from exc
    return render(request, "annotation/question_rubric_version.html", {"question": question, "kept": kept})


@annotator_required
def response_list(request):
    responses = selectors.response_list(request.GET, viewer=request.user)
    page = Paginator(responses, 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "filters": request.GET,
        "querystring": query.urlencode(),
        **selectors.response_filter_choices(),
    }
    return render(request, "annotation/response_list.html", context)


@annotator_required
def response_detail(request, pk):
    response = found_or_404(selectors.response_detail, pk, message="No such response.")
    can_see = selectors.can_see_scores(request.user, response)
    labels = (
        response.labels.select_related("annotator").prefetch_related("step_labels") if can_see else []
    )
    return render(
        request,
        "annotation/response_detail.html",
        {"response": response, "question": response.question, "can_see_labels": can_see, "labels": labels},
    )


@reviewer_required
def dataset_import(request):
    initial = {key: request.GET[key] for key in ("format", "exam", "overlap") if request.GET.get(key)}
    form = DatasetImportForm(request.POST or None, request.FILES or None, initial=initial)
    overlap = None
    if request.method == "POST" and form.is_valid():
        upload, fmt = form.cleaned_data["file"], form.cleaned_data["format"]
        kwargs = {"exam_name": form.cleaned_data["exam"]} if form.cleaned_data["exam"] else {}
        # Release files only: what to do with questions already in another exam (importers/placement.py).
        choice = form.cleaned_data["overlap"] if fmt == "realmath" else None
        if choice:
            kwargs["overlap"] = choice
        try:
            if runs_in_background(upload, fmt):  # by the size it inflates to
                job = create_import_job(request.user, fmt, upload, form.cleaned_data["exam"], overlap=choice)
                return redirect("annotation:import_job", pk=job.pk)
            data = upload.read()
            result = IMPORTERS[fmt](data, upload.name, user=request.user, **kwargs)
        except ExamOverlap as exc:  # kept, so that the choice imports it without uploading it again
            token = pending.keep(request.user, fmt=fmt, file_name=upload.name, exam_name=exc.exam_name, overlap=exc,
                                 source=data)
            overlap = {"token": token, "exam": exc.exam_name, "questions": exc.questions,
                       "holders": [{"id": e.pk, "name": e.name, "questions": n} for e, n in exc.holders]}
            form.add_error("overlap", gettext("Nothing was imported. %(exc)s") % {"exc": exc})
        except ImportFormatError as exc:
            form.add_error("file", gettext("Nothing was imported. %(exc)s") % {"exc": exc})
        else:
            messages.success(request, gettext("Imported %(name)s.") % {"name": upload.name})
            return redirect("annotation:import_report", pk=result.report_id)
    reports = list(selectors.recent_import_reports())
    exams = selectors.report_exams(reports)
    return render(request, "annotation/import.html", {
        "form": form, "overlap": overlap, "jobs": selectors.unfinished_import_jobs(),
        "reports": [(report, report_summary(report, exams)) for report in reports],
    })


@reviewer_required
@require_POST
def import_choose(request, token):
    """Import an upload kept for a choice (questions already in another exam) with the choice
    its button sends: join, move or keep."""
    try:
        kind, outcome = import_pending(request.user, token, request.POST.get("overlap", ""))
    except LookupError as exc:
        raise Http404("No upload of yours waits for this choice (it expires after an hour).") from exc
    except ImportFormatError as exc:
        messages.error(request, gettext("Nothing was imported. %(exc)s") % {"exc": exc})
        return redirect("annotation:import")
    if kind == "job":
        return redirect("annotation:import_job", pk=outcome.pk)
    return redirect("annotation:import_report", pk=outcome.report_id)


def import_job_state(job):
    done, total = job_progress(job)
    percent = 100 if job.status == ImportJob.Status.DONE else (int(100 * done / total) if total else 0)
    report = reverse("annotation:import_report", args=[job.report_id]) if job.report_id else None
    return {"id": job.pk, "status": job.status, "done": done, "total": total, "percent": percent, "error": job.error,
            "report": report, "notice": job.restart_notice}


@reviewer_required
def import_job(request, pk):
    job = get_object_or_404(ImportJob, pk=pk)
    if job.status == ImportJob.Status.DONE and job.report_id:
        return redirect("annotation:import_report", pk=job.report_id)  # finished: the report is what is wanted
    choice = None
    if job.status == ImportJob.Status.FAILED and (kept := pending.for_job(job)):
        choice = {"token": kept[0], **kept[1]}  # refused for a choice: its buttons
    return render(request, "annotation/import_job.html", {"job": job, "state": import_job_state(job),
                                                          "overlap": choice})


@reviewer_required
def import_job_progress(request, pk):
    return JsonResponse(import_job_state(get_object_or_404(ImportJob, pk=pk)))


# The import report's counts in words (the stored keys stay as they are: the API gives them).
COUNT_WORDS = {
    "records": gettext_lazy("records in the file"),
    "lines": gettext_lazy("lines in the file"),
    "questions_created": gettext_lazy("questions added"),
    "questions_skipped": gettext_lazy("questions already here (kept as they were)"),
    "responses_created": gettext_lazy("answers added"),
    "responses_skipped": gettext_lazy("answers already here (skipped, kept as they were)"),
    "labels_created": gettext_lazy("labels added (imported golds included)"),
    "labels_skipped": gettext_lazy("labels of skipped answers (not loaded again)"),
    "adjudications_created": gettext_lazy("adjudications added"),
    "adjudications_skipped": gettext_lazy("adjudications of skipped answers (not loaded again)"),
    "judge_results_created": gettext_lazy("judge results added"),
    "judge_results_skipped": gettext_lazy("judge results of skipped answers (not loaded again)"),
    "questions_moved": gettext_lazy("questions moved into this exam from another, with their answers"),
}


NOT_COUNTS = ("exam_id", "skipped_by_exam", "questions")


def report_summary(report, exams):
    """A recent import in words, for the import page's list: its counts, the exam it went into
    and where its skipped answers sit, by exam name (`exams`: {str(id): exam})."""
    counts = report.counts if isinstance(report.counts, dict) else {}
    words = [f"{n} {text}" for n, text in report_counts(counts) if n]
    exam = exams.get(str(counts.get("exam_id")))
    where = [gettext("into “%(exam)s”") % {"exam": exam.name}] if exam else []
    for key, n in sorted((counts.get("skipped_by_exam") or {}).items(), key=lambda kv: -kv[1]):
        if key in exams and isinstance(n, int):
            where.append(ngettext("%(n)s skipped answer is in “%(exam)s”", "%(n)s skipped answers are in “%(exam)s”", n)
                         % {"n": n, "exam": exams[key].name})
    return {"counts": gettext("; ").join(words) or gettext("nothing"), "where": gettext("; ").join(where)}


def report_counts(counts):
    """[(number, words)] of a report's counts, known ones in a fixed order, then any other."""
    rows = [(counts[key], words) for key, words in COUNT_WORDS.items() if isinstance(counts.get(key), int)]
    rows += [(value, key.replace("_", " ")) for key, value in counts.items()
             if key not in COUNT_WORDS and key not in NOT_COUNTS and isinstance(value, int)]
    return rows


@reviewer_required
def import_report(request, pk):
    report = get_object_or_404(ImportReport, pk=pk)
    skipped = report.counts.get("skipped_by_exam") or {}
    exams = selectors.report_exams([report])
    # Where the skipped answers sit, and a way to import the file into that exam.
    skipped_in = [
        {"exam": exams[key], "n": n,
         "again": f"{reverse('annotation:import')}?{urlencode({'format': report.kind, 'exam': exams[key].name, 'overlap': 'move'})}"}
        for key, n in sorted(skipped.items(), key=lambda kv: -kv[1]) if key in exams
    ]
    return render(request, "annotation/import_report.html", {
        "report": report, "counts": report_counts(report.counts), "skipped_in": skipped_in,
        "report_exam": report.counts.get("exam_id"), "placed": placed_questions(report.counts, exams),
        "rubric_warnings": [w for w in report.warnings if w.get("rubric")],
        "record_warnings": [w for w in report.warnings if not w.get("rubric")],
    })


PLACED_WORDS = {
    "created": gettext_lazy("added to “%(exam)s”"),
    "here": gettext_lazy("already in “%(exam)s”"),
    "moved": gettext_lazy("moved from “%(source)s” into “%(exam)s”, with its answers"),
    "elsewhere": gettext_lazy("left in “%(exam)s”, where it already was (its answers in the file joined it there)"),
}


def placed_questions(counts, exams):
    """[{id, location, exam, words}] of where each question of a release import went."""
    rows = []
    for row in counts.get("questions") or []:
        if not isinstance(row, dict) or row.get("how") not in PLACED_WORDS:
            continue
        exam, source = exams.get(str(row.get("exam"))), exams.get(str(row.get("from")))
        rows.append({"id": row.get("id"), "location": row.get("location") or "", "exam": exam,
                     "words": PLACED_WORDS[row["how"]] % {"exam": exam.name if exam else "?",
                                                          "source": source.name if source else "?"}})
    return rows


@annotator_required
def exam_list(request):
    return render(request, "annotation/exam_list.html", {"exams": selectors.exam_list()})


@annotator_required
def exam_detail(request, pk):
    """One exam: its questions with counts (reviewers: answers, labels, golds, judge results;
    annotators: answers and their own work, nothing hidden), links to its labelling, review and
    studies, and (reviewers) its anchoring experiment."""
    exam = selectors.exam_by_id(parse_id(pk))
    if exam is None:
        raise Http404("No such exam.")
    context = {
        "exam": exam,
        "rows": selectors.exam_question_rows(exam, request.user),
        "anchoring": exam_anchoring_context(exam, request.user),
    }
    return render(request, "annotation/exam_detail.html", context)
