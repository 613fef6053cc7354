"""Issue 34: the paper's style-ablation file read as released (fixtures/realmath_eval_full/, unchanged): its 72
records in the release's shape (the rewrite in student_response) matched to the human answers by problem and
student; per case, why a rewrite is flagged (the final answers, the lines not found); flagged cases judged only
in a second, labelled analysis; the run's header count agrees with its table."""
import json
import shutil
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.importers import import_realmath
from annotation.models import Response
from studies import selectors, services, style
from studies.models import DerivedAnswer, ProbeItem
from tests.conftest import ROOT
from tests.factories import make_setting
from tests.llm_server import Reply, message_text

pytestmark = pytest.mark.django_db

FULL = ROOT / "fixtures" / "realmath_eval_full"
STYLE = "realmath_eval_gemini3pro_hard_cases_ge2_style_transferred_72.json"
INPUT = "realmath_eval_gemini3pro_hard_cases_ge2_style_transfer_input_72.json"


@pytest.fixture
def release_with_rewrites(tmp_path):
    path = tmp_path / "realmath_eval.json"
    shutil.copyfile(FULL / "realmath_eval.json", path)
    with path.open("rb") as stream:
        import_realmath(stream, path.name)
    shutil.copyfile(FULL / STYLE, tmp_path / STYLE)
    out = StringIO()
    call_command("style_ablation", "import", str(tmp_path / STYLE), stdout=out)
    return out.getvalue(), json.loads((FULL / STYLE).read_text(encoding="utf-8"))


def _case(cases, record):
    return next(c for c in cases if c["record"] == record)


def test_the_72_released_rewrites_are_read_and_each_flag_says_why(release_with_rewrites):
    out, records = release_with_rewrites
    assert f"Rewrites from {STYLE}: 72 made, 0 kept" in out and "0 unmatched records" in out
    rows = style.current_rewrites()
    assert len(rows) == 72 and {r.response.source for r in rows} == {"human"}
    # each rewrite hangs off the answer with that problem and student (not the first (student, location) pair)
    for row in rows:
        record = records[row.change["record"]]
        assert (row.response.question.statement, row.response.student_id) == (record["problem_statement"], record["student_id"])
        assert row.text == record["student_response"]
    cases = style.flag_details(rows)
    counts = style.rewrite_counts()
    assert counts["flagged"] == len(cases) and counts["usable"] == 72 - len(cases)
    # record 2: the final answer changed (a line of working became the "answer") and lines were merged, not dropped
    two = _case(cases, 2)
    assert two["reasons"] == ["final_answer_changed", "lines_dropped"]
    assert (two["final_before"], two["final_after"]) == (r"\ln(\sin m)=m", "y - 2 = x - 0")
    assert (two["lines_before"], two["lines_after"], two["lines_not_found"]) == (13, 5, [])
    # record 27: the same final answer up to notation; fewer lines, all of their content kept (merged)
    merged = _case(cases, 27)
    assert merged["reasons"] == ["lines_dropped"] and merged["final_check"] == "same text up to notation"
    assert (merged["lines_before"], merged["lines_after"], merged["lines_not_found"]) == (16, 11, [])
    # record 42: two lines of the original are really gone from the rewrite
    dropped = _case(cases, 42)
    assert dropped["reasons"] == ["lines_dropped"] and (dropped["lines_before"], dropped["lines_after"]) == (20, 17)
    assert dropped["lines_not_found"] == ["- Because $A=\\pi/3$, we have $\\sin A=\\sqrt{3}/2$.",
                                          "- Hence $C<\\pi/3$, a contradiction. Therefore $B$ is obtuse."]
    # record 3: kept (same final answer, more lines)
    assert not any(c["record"] == 3 for c in cases)
    out = StringIO()
    call_command("style_ablation", "flagged", "--format", "json", stdout=out)
    assert _case(json.loads(out.getvalue()), 42)["lines_not_found"] == dropped["lines_not_found"]


def test_the_input_file_is_not_taken_for_rewrites(release_with_rewrites, tmp_path):
    shutil.copyfile(FULL / INPUT, tmp_path / INPUT)
    counts = style.import_rewrites((tmp_path / INPUT).read_bytes(), INPUT)
    assert counts["made"] == 0 and len(counts["same_as_original"]) == 72


def test_a_run_with_the_flagged_cases_reports_them_apart_and_its_counts_add_up(endpoint, llm_server,
                                                                                release_with_rewrites):
    n_flagged = style.rewrite_counts()["flagged"]
    # three rewritten answers lose their gold score: judged, but left out of the tables (the old "35 vs 32")
    unflagged = [r.response_id for r in style.current_rewrites() if not r.change.get("excluded")][:3]
    Response.objects.filter(pk__in=unflagged).update(gold_score=None)

    def judge(payload):  # the rough original 5, the textbook rewrite 7
        return Reply("Overall Score: 7" if "Step 1" in message_text(payload) else "Overall Score: 5")

    llm_server.default = judge
    setting = make_setting(endpoint, name="style-release")
    run = services.start_probe_run(setting, probe_names=[style.PROBE], enqueue=False, include_flagged=True)
    assert run.n_items == 72 and run.skipped[f"{style.PROBE} (flagged)"] == 0
    run = services.run_inline(run)
    report = style.ablation_report(run, n_resamples=20)
    progress = selectors.run_progress(run)
    assert progress["ok"] == report["n_judged"] == 72
    assert report["n_rewrites_judged"] + report["n_flagged_judged"] + report["n_judged_without_gold"] == 72
    assert report["n_judged_without_score"] == 0 and report["n_not_judged"] == 0
    assert (report["n_flagged_judged"], report["n_judged_without_gold"]) == (n_flagged, 3)
    assert report["groups"]["all"]["n"] == 72 - n_flagged - 3
    assert report["with_flagged"]["n_flagged"] == n_flagged
    assert report["with_flagged"]["groups"]["all"]["n"] == 72 - 3
    # without the option the flagged rewrites are counted, never judged
    plain = services.start_probe_run(setting, probe_names=[style.PROBE], enqueue=False)
    assert plain.n_items == 72 - n_flagged and plain.skipped[f"{style.PROBE} (flagged)"] == n_flagged
    assert not ProbeItem.objects.filter(run=plain, derived__in=DerivedAnswer.objects.filter(
        pk__in=[r.pk for r in style.current_rewrites() if r.change.get("excluded")])).exists()
