"""What the Validity view reads: one row per answer a judge setting scored (its current result),
with the experts' golds and labels; the draws recorded so far. A constant number of queries,
whatever the number of answers."""
from dataclasses import dataclass, field

from annotation.models import Label, Response, RubricCheckpoint, StepLabel
from annotation.selectors import exam_named_or_numbered
from core.numbers import parse_id
from grading.models import JudgeResult, JudgeRun, JudgeSetting
from grading.review.selectors.scopes import Scope, ScopeError, current_results, find_setting, settings_with_results

from .models import GoldDraw

GOLD_STATUSES = (Response.GoldStatus.IMPORTED, Response.GoldStatus.AGREED, Response.GoldStatus.ADJUDICATED,
                 Response.GoldStatus.SINGLE)
SOURCES = ("human", "synthetic")


class SelectionError(ValueError):
    """A setting, exam or question the request names does not exist."""


@dataclass
class Selection:
    setting: JudgeSetting
    exam: object = None
    question_id: int | None = None
    source: str = ""  # "" for every source
    second: JudgeSetting | None = None  # a second setting: its disagreement is a deferral signal

    def as_dict(self):
        return {"setting_id": self.setting.pk, "setting": str(self.setting), "model": self.setting.model,
                "endpoint": self.setting.endpoint.name if self.setting.endpoint_id else None,
                "exam": getattr(self.exam, "name", None),
                "exam_id": getattr(self.exam, "pk", None), "question_id": self.question_id, "source": self.source or "all",
                "second_setting_id": self.second.pk if self.second else None}


@dataclass
class AnswerRow:
    response_id: int
    question_id: int
    student_id: str
    source: str
    full_score: float
    judge: float
    spread: float | None = None
    samples: list = field(default_factory=list)
    gold: float | None = None
    experts: dict = field(default_factory=dict)  # annotator name -> total points of their submitted label
    second: float | None = None
    step_verdicts: dict = field(default_factory=dict)  # the judge's own step verdicts (step judges)


def setting_named_or_numbered(value):
    """A judge setting version by id, else the newest version of that name; None when neither."""
    value = str(value or "").strip()
    if not value:
        return None
    setting = JudgeSetting.objects.filter(pk=parse_id(value)).first() if parse_id(value) is not None else None
    if setting is not None:
        return setting
    try:
        return find_setting(value)  # the newest version of that name (the review commands' lookup)
    except ScopeError:
        return None


def selection_from(params):
    """The selection a request or a command names: `setting` (id or name), `exam` (name or id),
    `question` (id), `source` (human / synthetic / all), `second` (a second setting)."""
    setting = setting_named_or_numbered(params.get("setting"))
    if setting is None:
        raise SelectionError("setting")
    exam = None
    if str(params.get("exam") or "").strip():
        exam = exam_named_or_numbered(str(params.get("exam")).strip())
        if exam is None:
            raise SelectionError("exam")
    question_id = None
    if str(params.get("question") or "").strip():
        question_id = parse_id(str(params.get("question")).strip())
        if question_id is None or not Response.objects.filter(question_id=question_id).exists():
            raise SelectionError("question")
    source = str(params.get("source") or "").strip().lower()
    if source in ("", "all"):
        source = ""
    elif source not in SOURCES:
        raise SelectionError("source")
    second = None
    if str(params.get("second") or "").strip():
        second = setting_named_or_numbered(params.get("second"))
        if second is None:
            raise SelectionError("second")
    return Selection(setting, exam, question_id, source, second)


def _responses(selection):
    queryset = Response.objects.all()
    if selection.exam is not None:
        queryset = queryset.filter(question__exam=selection.exam)
    if selection.question_id is not None:
        queryset = queryset.filter(question_id=selection.question_id)
    if selection.source:
        queryset = queryset.filter(source=selection.source)
    return queryset


def _scores(setting, response_ids):
    results = current_results(Scope(setting=setting)).filter(
        status=JudgeResult.Status.OK, score__isnull=False, response_id__in=response_ids)
    return {r["response_id"]: r for r in results.values("response_id", "score", "spread", "samples", "step_verdicts")}


def answer_rows(selection) -> list[AnswerRow]:
    """One row per answer of the selection that the setting scored (hold-outs never count)."""
    responses = _responses(selection)
    scores = _scores(selection.setting, responses.values("pk"))
    rows = {}
    for r in responses.filter(pk__in=list(scores)).values(
        "pk", "question_id", "student_id", "source", "question__full_score", "gold_score", "gold_status"
    ).order_by("pk"):
        result = scores[r["pk"]]
        gold = float(r["gold_score"]) if r["gold_score"] is not None and r["gold_status"] in GOLD_STATUSES else None
        rows[r["pk"]] = AnswerRow(
            response_id=r["pk"], question_id=r["question_id"], student_id=r["student_id"], source=r["source"],
            full_score=float(r["question__full_score"]), judge=float(result["score"]), spread=result["spread"],
            samples=[s for s in (result["samples"] or []) if isinstance(s, (int, float))], gold=gold,
            step_verdicts=result["step_verdicts"] if isinstance(result["step_verdicts"], dict) else {},
        )
    for label in Label.objects.filter(response_id__in=list(rows), submitted=True, annotator__isnull=False,
                                      is_imported=False, total__isnull=False).values(
            "response_id", "annotator__username", "total"):
        rows[label["response_id"]].experts[label["annotator__username"]] = float(label["total"])
    if selection.second is not None:
        for response_id, result in _scores(selection.second, list(rows)).items():
            rows[response_id].second = float(result["score"])
    return list(rows.values())


def step_references(response_ids):
    """{response id: (transcript, start of the experts' first wrong step or None)} for the answers
    whose submitted expert labels mark steps (None: they marked steps and none is wrong)."""
    firsts = {}
    for response_id, verdict, start in StepLabel.objects.filter(
        label__response_id__in=list(response_ids), label__submitted=True, label__annotator__isnull=False,
        needs_review=False, start__isnull=False,
    ).values_list("label__response_id", "verdict", "start"):
        wrong = None if verdict == StepLabel.Verdict.CORRECT else start
        if response_id not in firsts:
            firsts[response_id] = wrong
        elif wrong is not None and (firsts[response_id] is None or wrong < firsts[response_id]):
            firsts[response_id] = wrong
    transcripts = dict(Response.objects.filter(pk__in=list(firsts)).values_list("pk", "transcript"))
    return {pk: (transcripts[pk], first) for pk, first in firsts.items()}


def checkpoint_marks(response_ids):
    """(marks, checkpoints): marks {response id: {checkpoint number: [each expert's mark]}} from the
    submitted expert labels' checkpoint marks (a number counts from 1 in rubric order, as the rubric
    judge's step report numbers them); checkpoints {question id: [(sub-question label, points)]} in
    that order."""
    response_ids = list(response_ids)
    question_ids = Response.objects.filter(pk__in=response_ids).values("question_id")
    checkpoints, number = {}, {}
    for pk, question_id, label, points in RubricCheckpoint.objects.filter(question_id__in=question_ids).order_by(
            "question_id", "order", "id").values_list("pk", "question_id", "sub_question__label", "cumulative_points"):
        checkpoints.setdefault(question_id, []).append((label or "", float(points)))
        number[str(pk)] = len(checkpoints[question_id])
    marks = {}
    for response_id, given in Label.objects.filter(
        response_id__in=response_ids, submitted=True, annotator__isnull=False, is_imported=False,
    ).exclude(checkpoint_marks={}).values_list("response_id", "checkpoint_marks"):
        for checkpoint_id, mark in (given or {}).items() if isinstance(given, dict) else ():
            if str(checkpoint_id) in number:
                marks.setdefault(response_id, {}).setdefault(number[str(checkpoint_id)], []).append(mark)
    return marks, checkpoints


def setting_of_run(run_id):
    """The setting version id of a judge run (the review pages scope by run), or None."""
    pk = parse_id(str(run_id or ""))
    return JudgeRun.objects.filter(pk=pk).values_list("setting_id", flat=True).first() if pk is not None else None


def draws(setting, limit=20):
    """The draws recorded for a setting, newest first (`limit` None: all)."""
    queryset = GoldDraw.objects.filter(setting=setting).select_related("created_by")
    return list(queryset if limit is None else queryset[:limit])


def drawn_response_ids(setting) -> set[int]:
    """The answers sent for golds by recorded random draws of this setting."""
    ids = set()
    for response_ids in GoldDraw.objects.filter(setting=setting, purpose=GoldDraw.Purpose.GOLDS).values_list(
            "response_ids", flat=True):
        ids.update(response_ids)
    return ids


__all__ = ["AnswerRow", "Selection", "SelectionError", "answer_rows", "checkpoint_marks", "draws", "drawn_response_ids", "selection_from",
           "setting_named_or_numbered", "setting_of_run", "settings_with_results", "step_references"]
