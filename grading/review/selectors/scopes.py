"""Scopes of the review figures: one judge setting version (its current result per response:
the newest, since a newer one means the response's text changed), or one judge run (the result
each of its items points to); the labels the figures name questions and exams by."""
from dataclasses import dataclass

from django.db.models import Count, Exists, OuterRef
from django.utils.translation import gettext, gettext_lazy

from annotation.models import Exam, Question
from core.ids import id_param

from ...judges import strategies
from ...models import JudgeResult, JudgeRun, JudgeRunItem, JudgeSetting

DEFAULT_THRESHOLD = 2.0
BOOTSTRAP_RESAMPLES = 1000
EPS = 1e-9

LEFT_OUT_REASONS = {
    "running": gettext_lazy("judge still running"),
    "invalid": gettext_lazy("judge output unreadable"),
    "error": gettext_lazy("judge call failed"),
    "no_score": gettext_lazy("no judge score"),
    "no_gold": gettext_lazy("no gold score"),
    "out_of_range": gettext_lazy("score out of range"),
}
# No question's full score reaches this (a numeric(7, 2) column): a judge score at or above it, or
# below zero (or a gold below zero), was stored before imports were range-checked (a judge score of
# 1e308 overflowed every metric of its setting: issue 40). Such a result is left out, and counted.
SCORE_CEILING = 100000.0


class ScopeError(ValueError):
    """The requested setting or run does not exist."""


@dataclass
class Scope:
    setting: JudgeSetting | None = None
    run: JudgeRun | None = None

    def __bool__(self):
        return self.setting is not None or self.run is not None

    @property
    def label(self):
        if self.run is not None:
            return f"run {self.run.pk} of {self.run.setting}"
        return str(self.setting) if self.setting else "—"

    def as_dict(self):
        return {
            "setting": self.setting.name if self.setting else None,
            "version": self.setting.version if self.setting else None,
            "setting_id": self.setting.pk if self.setting else None,
            "run": self.run.pk if self.run else None,
        }

    def query(self):
        """Querystring parameters that select this scope again."""
        return {"run": self.run.pk} if self.run else {"setting": self.setting.pk} if self.setting else {}


# --- scopes --------------------------------------------------------------------------------

def settings_with_results():
    """Judge setting versions that have produced results, for the setting picker (one query)."""
    return list(
        JudgeSetting.objects.annotate(n_results=Count("results"))
        .filter(n_results__gt=0)
        .only("id", "name", "version", "kind", "model")
        .order_by("name", "-version")
    )


def recent_runs(limit=100):
    return list(JudgeRun.objects.select_related("setting").only(
        "id", "created", "status", "n_items", "setting__name", "setting__version"
    ).order_by("-created", "-id")[:limit])


def resolve_scope(params, *, default=True, preferred=None):
    """The scope named by `setting` (a setting version id) or `run` (a run id) in `params`.

    Without either (when `default`): the setting version `preferred` (the one the person chose
    last) if it still has results, else the newest one with results to compare with a gold, else
    the most recently used one."""
    run_id, setting_id = str(params.get("run") or "").strip(), str(params.get("setting") or "").strip()
    if run_id:
        run = JudgeRun.objects.select_related("setting").filter(pk=id_param(run_id) or 0).first()
        if run is None:
            raise ScopeError(gettext("No judge run %(run_id)s.") % {"run_id": run_id})
        return Scope(setting=run.setting, run=run)
    if setting_id:
        setting = JudgeSetting.objects.filter(pk=id_param(setting_id) or 0).first()
        if setting is None:
            raise ScopeError(gettext("No judge setting version with id %(setting)s.") % {"setting": setting_id})
        return Scope(setting=setting)
    if not default:
        return Scope()
    return Scope(setting=default_setting(preferred))


def default_setting(preferred=None):
    """The setting version a review page opens on when none is named (see resolve_scope)."""
    preferred = id_param(preferred)
    if preferred is not None and JudgeResult.objects.filter(setting_id=preferred).exists():
        return JudgeSetting.objects.filter(pk=preferred).first()
    comparable = JudgeResult.objects.filter(
        status=JudgeResult.Status.OK, score__isnull=False, response__gold_score__isnull=False,
    ).order_by("-id").values_list("setting_id", flat=True).first()
    latest = comparable or JudgeResult.objects.order_by("-id").values_list("setting_id", flat=True).first()
    return JudgeSetting.objects.filter(pk=latest).first() if latest else None


def find_setting(name, version=None):
    """A setting version by name (the newest version unless `version` is given)."""
    judge_settings = JudgeSetting.objects.filter(name=name)
    if version is not None:
        judge_settings = judge_settings.filter(version=version)
    setting = judge_settings.order_by("-version").first()
    if setting is None:
        if version:
            raise ScopeError(gettext("No judge setting named %(name)s with version %(version)s.")
                             % {"name": repr(name), "version": version})
        raise ScopeError(gettext("No judge setting named %(name)s.") % {"name": repr(name)})
    return setting


def current_results(scope):
    """The results a scope's figures are about: one per response."""
    if scope.run is not None:
        items = JudgeRunItem.objects.filter(run=scope.run, result__isnull=False).values("result_id")
        return JudgeResult.objects.filter(pk__in=items)
    if scope.setting is None:
        return JudgeResult.objects.none()
    newer = JudgeResult.objects.filter(setting=OuterRef("setting"), response=OuterRef("response"), pk__gt=OuterRef("pk"))
    results = JudgeResult.objects.filter(setting=scope.setting).exclude(Exists(newer))
    holdout = strategies.holdout_ids(scope.setting)  # issue 27: a setting's hold-outs never count for it
    return results.exclude(response_id__in=holdout) if holdout else results


def question_label(pk, location="", external_id=""):
    """How a question is named in tables: its label and its typed id, e.g. '3-07 · question #1'."""
    return " · ".join(filter(None, [location or external_id, f"question #{pk}"]))


def labels_of(question_ids, exam_ids):
    questions = {
        pk: question_label(pk, location, external_id)
        for pk, location, external_id in Question.objects.filter(pk__in=question_ids).values_list(
            "pk", "location", "external_id"
        )
    } if question_ids else {}
    exams = dict(Exam.objects.filter(pk__in=exam_ids).values_list("pk", "name")) if exam_ids else {}
    return questions, exams


def choice_labels(choices):
    """{code: label} in the active language, as plain strings (the report is also JSON)."""
    return {code: str(label) for code, label in choices}
