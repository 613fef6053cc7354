"""The Validity view's section of the full JSONL export (validity.exchange): the random draws of answers
sent to the experts (seed, purpose, selection, answers, who and when) go out with the dataset and come
back on import, into an empty database and again into the same one."""
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.export.load import import_dataset
from annotation.export.writers import write_export
from annotation.importers import ImportFormatError
from annotation.models import Response
from validity.models import GoldDraw

pytestmark = pytest.mark.django_db(transaction=True)


def _draws(reviewer):
    from grading.models import JudgeResult, JudgeSetting

    setting = JudgeSetting.objects.create(name="rubric", version=1, kind="rubric", model="m1")
    other = JudgeSetting.objects.create(name="unexported", version=1, kind="rubric", model="m2")
    responses = list(Response.objects.order_by("id")[:6])
    JudgeResult.objects.bulk_create(JudgeResult(setting=setting, response=r, cache_key=f"k{r.pk}", status="ok",
                                                score=3.0) for r in responses)
    ids = [r.pk for r in responses]
    golds = GoldDraw.objects.create(setting=setting, purpose="golds", seed=7, response_ids=ids[:3], created_by=reviewer,
                                    selection={"setting_id": setting.pk, "exam": None, "source": "all"})
    GoldDraw.objects.create(setting=setting, purpose="aat", seed=9, response_ids=ids[2:5], labels_per_answer=3)
    GoldDraw.objects.create(setting=other, purpose="golds", seed=1, response_ids=ids[:2])  # no result: not exported
    return golds


def _lines(folder):
    return [json.loads(line) for line in (Path(folder) / "dataset.jsonl").read_text().splitlines()]


def _snapshot():
    return sorted(
        (d.setting.name, d.purpose, d.seed, d.labels_per_answer, d.selection, d.created.isoformat(),
         d.created_by.username if d.created_by else None,
         sorted(Response.objects.filter(pk__in=d.response_ids).values_list("student_id", "source")))
        for d in GoldDraw.objects.select_related("setting", "created_by"))


def test_draws_round_trip(sample_data, reviewer, tmp_path):
    _draws(reviewer)
    before = [d for d in _snapshot() if d[0] == "rubric"]
    write_export(Response.objects.all(), "jsonl", tmp_path / "a")
    lines = _lines(tmp_path / "a")
    draws = [line for line in lines if line["type"] == "gold_draw"]
    assert [(d["purpose"], d["seed"], d["drawn"], d["created_by"]) for d in draws] == [
        ("golds", 7, 3, "rev1"), ("aat", 9, 3, None)]
    assert draws[0]["setting"] == ["rubric", 1] and draws[0]["selection"]["source"] == "all"
    assert [line["type"] for line in lines].index("gold_draw") > [line["type"] for line in lines].index("judge_config")
    carried = [line["gold_draws"] for line in lines if line["type"] == "response" and "gold_draws" in line]
    assert sorted(len(keys) for keys in carried) == [1, 1, 1, 1, 2]  # the third answer is in both draws
    raw = (tmp_path / "a" / "dataset.jsonl").read_bytes()
    call_command("flush", interactive=False, verbosity=0)
    import_dataset(raw, "dataset.jsonl")
    assert _snapshot() == before
    write_export(Response.objects.all(), "jsonl", tmp_path / "b")
    assert (tmp_path / "b" / "dataset.jsonl").read_bytes() == raw
    import_dataset(raw, "dataset.jsonl")  # a second import of the same file: the same draws, not new ones
    assert _snapshot() == before


def test_a_response_naming_an_unknown_draw_is_refused(sample_data, reviewer, tmp_path):
    _draws(reviewer)
    write_export(Response.objects.all(), "jsonl", tmp_path)
    lines = [line for line in _lines(tmp_path) if line["type"] != "gold_draw"]
    raw = "\n".join(json.dumps(line) for line in lines).encode()
    call_command("flush", interactive=False, verbosity=0)
    with pytest.raises(ImportFormatError, match="gold_draws\\[0\\]: names a draw"):
        import_dataset(raw, "dataset.jsonl")
    assert GoldDraw.objects.count() == 0 and Response.objects.count() == 0
    bad = [dict(line, seed="seven") if line["type"] == "gold_draw" else line for line in _lines(tmp_path)]
    with pytest.raises(ImportFormatError, match="seed"):
        import_dataset("\n".join(json.dumps(line) for line in bad).encode(), "dataset.jsonl")
