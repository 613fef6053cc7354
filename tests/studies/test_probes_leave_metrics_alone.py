"""probe_judge over all 224 human answers of a RealMath-Eval-format import, against the loopback
server: `metrics --format json`, the disagreement queue and dataset exports are the same before
and after (derived answers are never responses, their judgements never judge results)."""
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Response
from grading.judges import services as judge_services
from grading.models import JudgeResult
from grading.review import selectors as review_selectors
from studies.models import DerivedAnswer, ProbeItem
from tests.conftest import REALMATH_HUMAN
from tests.factories import make_setting

pytestmark = pytest.mark.django_db
N_ANSWERS = 224


def realmath_file(tmp_path):
    """224 human answers in the RealMath-Eval format: the 32 sample records, each copied 7 times
    with a new student id and a first line naming the copy."""
    records = json.loads(Path(REALMATH_HUMAN).read_text())
    out = []
    for index in range(N_ANSWERS):
        record = dict(records[index % len(records)])
        record["student_id"] = f"copy{index:03d}-{record['student_id']}"
        record["student_response"] = f"Copy {index}.\n{record['student_response']}"
        out.append(record)
    path = tmp_path / "realmath_224.json"
    path.write_text(json.dumps(out, ensure_ascii=False))
    return path


def metrics_json(name):
    out = StringIO()
    call_command("metrics", "--setting", name, "--format", "json", stdout=out)
    return out.getvalue()


def export_files(folder):
    call_command("export_dataset", "--format", "jsonl", "--out", str(folder), stdout=StringIO())
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "manifest.json"}


def test_probes_over_224_answers_change_no_metric_queue_or_export(tmp_path, endpoint, llm_server):
    call_command("import_realmath", str(realmath_file(tmp_path)), verbosity=0)
    assert Response.objects.filter(source="human").count() == N_ANSWERS
    setting = make_setting(endpoint, name="rubric-224", max_tokens=256)
    judge_services.run_inline(judge_services.start_judge_run(setting, enqueue=False))  # the scripted model scores
    before = metrics_json("rubric-224")
    assert json.loads(before)["overall"]["n"] == N_ANSWERS
    queue_before = list(review_selectors.disagreement_queue(review_selectors.resolve_scope({"setting": setting.pk}))
                        .values_list("pk", flat=True))
    exported_before = export_files(tmp_path / "before")
    results, responses = JudgeResult.objects.count(), Response.objects.count()

    out = StringIO()
    call_command("probe_judge", "--setting", "rubric-224", "--probe", "all", "--inline", "--format", "json",
                 stdout=out, stderr=StringIO())
    rates = json.loads(out.getvalue())
    assert set(rates) == {"drop-final-answer", "arithmetic-slip", "truncate-last-step", "notation-swap",
                          "reorder-independent-steps"}
    for name, row in rates.items():
        assert row["n"] + row["skipped"] + row["failed"] == N_ANSWERS, name
    assert rates["truncate-last-step"]["n"] == N_ANSWERS
    assert ProbeItem.objects.count() == DerivedAnswer.objects.count() > N_ANSWERS
    assert ProbeItem.objects.filter(original_result__isnull=False).count() == ProbeItem.objects.count()  # reused

    assert metrics_json("rubric-224") == before  # byte-identical
    assert (JudgeResult.objects.count(), Response.objects.count()) == (results, responses)
    queue_after = list(review_selectors.disagreement_queue(review_selectors.resolve_scope({"setting": setting.pk}))
                       .values_list("pk", flat=True))
    assert queue_after == queue_before
    assert export_files(tmp_path / "after") == exported_before
