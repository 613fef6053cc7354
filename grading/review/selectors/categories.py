"""Category counts of confirmed meta-evaluations, and the meta-evaluation runs' progress."""
from collections import Counter, defaultdict

from django.db.models import Count, Max
from django.utils.translation import gettext

from annotation.models import Question, Response
from core.ids import id_param

from ...models import JudgeSetting, MetaEvalProposal, MetaEvalRun, MetaEvaluation
from ...runs.engine import stalled
from ..meta_eval import CATEGORIES
from .scopes import choice_labels, question_label

# --- category counts -----------------------------------------------------------------------

def category_summary(params=None):
    """Counts of confirmed categories overall and by judge, source, question and direction, and
    how often the expert kept the LLM's proposal (two queries)."""
    params = params or {}
    labels = MetaEvaluation.objects.exclude(category="")
    if id_param(params.get("setting")) is not None:
        labels = labels.filter(result__setting_id=id_param(params["setting"]))
    rows = list(labels.values_list(
        "category", "direction", "result__setting_id", "result__response__source", "result__response__question_id",
        "proposed_by", "kept_proposal", "proposal__category",
    ))
    setting_ids = {r[2] for r in rows}
    question_ids = {r[4] for r in rows}
    setting_labels = {c.pk: str(c) for c in JudgeSetting.objects.filter(pk__in=setting_ids).only("name", "version")}
    question_labels = {
        pk: question_label(pk, location, external_id)
        for pk, location, external_id in Question.objects.filter(pk__in=question_ids).values_list(
            "pk", "location", "external_id"
        )
    }

    def breakdown(index, names):
        table = defaultdict(Counter)
        for row in rows:
            table[row[index]][row[0]] += 1
        return [
            {"key": key, "label": names.get(key, key or "—"), "counts": [table[key][c] for c in CATEGORIES],
             "total": sum(table[key].values())}
            for key in sorted(table, key=lambda k: str(names.get(k, k)))
        ]

    with_proposal = [r for r in rows if r[6] is not None]
    kept = sum(1 for r in with_proposal if r[6])
    confusion = Counter((r[7], r[0]) for r in with_proposal if r[7])
    return {
        "categories": [{"code": c, "name": gettext(n), "definition": gettext(d)} for c, (n, d) in CATEGORIES.items()],
        "total": len(rows),
        "counts": [sum(1 for r in rows if r[0] == c) for c in CATEGORIES],
        "by_direction": breakdown(1, {"over": gettext("Judge over-scored"), "under": gettext("Judge under-scored"), "": "—"}),
        "by_judge": breakdown(2, setting_labels),
        "by_source": breakdown(3, choice_labels(Response.Source.choices)),
        "by_question": breakdown(4, question_labels),
        "by_origin": breakdown(5, choice_labels(MetaEvaluation.Source.choices)),
        "prelabel": {
            "with_proposal": len(with_proposal),
            "kept": kept,
            "changed": len(with_proposal) - kept,
            "kept_rate": kept / len(with_proposal) if with_proposal else None,
            "confusion": [[confusion[(llm, expert)] for expert in CATEGORIES] for llm in CATEGORIES],
        },
    }


def meta_eval_run_progress(run):
    """Proposals written so far by status (one query)."""
    counts = dict(run.proposals.values_list("status").annotate(n=Count("id")).order_by())
    done = sum(counts.values())
    last = run.proposals.aggregate(last=Max("created"))["last"]
    is_stalled = stalled(run.status, last, run.resumed or run.created)
    return {
        "id": run.pk, "status": run.status, "model": run.model, "n_items": run.n_items, "done": done,
        "epoch": run.epoch, "stalled": is_stalled,
        "can_resume": run.status == MetaEvalRun.Status.CANCELLED or is_stalled,
        "ok": counts.get(MetaEvalProposal.Status.OK, 0),
        "invalid": counts.get(MetaEvalProposal.Status.INVALID, 0),
        "error": counts.get(MetaEvalProposal.Status.ERROR, 0),
        "fraction": done / run.n_items if run.n_items else 1.0,
    }


def recent_meta_eval_runs(limit=10):
    return list(MetaEvalRun.objects.select_related("endpoint").order_by("-created", "-id")[:limit])
