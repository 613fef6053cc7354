"""Issue 27: the style ablation. Rewrites by an LLM (the loopback server) or from a file; a rewrite that changes
the final answer (CAS) or drops a line is flagged, excluded and counted; originals and rewrites are judged by
the same setting; per-group before/after figures are paired with intervals; rewrites never become answers."""
import json
import re
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Response, content_hash
from grading.models import JudgeResult
from studies import services, style
from studies.models import DerivedAnswer
from tests.factories import make_question, make_setting
from tests.llm_server import Reply, message_text

pytestmark = pytest.mark.django_db

ORIGINAL = "first we compute 2+2=4\nthen x=4-1\nso the answer is $x=3$"


def _answers():
    q1 = make_question("Style problem one.", full_score=10, location="S-1")
    q2 = make_question("Style problem two.", full_score=10, location="S-2")
    rows = []
    for q in (q1, q2):
        for i, source in enumerate(["human", "human", "synthetic"]):
            text = f"{ORIGINAL}\n(answer {q.location}-{i})"
            rows.append(Response.objects.create(question=q, source=source, student_id=f"{source}-{q.location}-{i}",
                                                transcript=text, transcript_hash=content_hash(text), gold_score=Decimal(5)))
    return rows


def test_check_flags_a_changed_final_answer_and_a_dropped_line():
    same = style.check_rewrite(ORIGINAL, "First, we compute $2+2=4$.\nThen $x = 4-1$.\nHence the answer is $x = 3$.")
    assert not same["excluded"] and same["final_check"] in ("equivalent (CAS)", "same text")
    changed = style.check_rewrite(ORIGINAL, "First, $2+2=4$.\nThen $x=4-1$.\nHence the answer is $x=4$.")
    assert changed["final_answer_changed"] and changed["excluded"] and changed["final_check"] == "different (CAS)"
    notation = style.check_rewrite("so the answer is 1/2", "Therefore the answer is $0.5$.")
    assert not notation["final_answer_changed"]  # the same value in another notation
    dropped = style.check_rewrite(ORIGINAL, "We compute $2+2=4$, so the answer is $x=3$.")
    assert dropped["lines_dropped"] and not dropped["final_answer_changed"] and dropped["excluded"]
    lost = style.check_rewrite(ORIGINAL, "line one\nline two\nline three")
    assert lost["final_answer_changed"] and lost["final_check"] == "the rewrite states no final answer"


def test_llm_rewrites_then_judged_with_the_same_setting_before_and_after_paired(endpoint, llm_server):
    _answers()

    def server(payload):
        text = message_text(payload)
        if "normalised textbook style" in text:
            tag = re.search(r"\(answer (S-\d-\d)\)", text).group(1)
            final = "x=7" if tag == "S-1-1" else "x=3"  # one rewrite changes the final answer
            return Reply(f"We compute $2+2=4$.\nThen $x=4-1$.\nHence the answer is ${final}$.\n(answer {tag})")
        # the judge: 5 (= gold) on the rough originals, 7 on textbook-style text
        return Reply("Overall Score: 7" if "We compute" in text else "Overall Score: 5")

    llm_server.default = server
    counts = style.rewrite_answers(endpoint, "rewriter", style.selected_answers())
    assert (counts["made"], counts["flagged"], counts["failed"]) == (6, 1, 0)
    request = next(r for r in llm_server.requests if "normalised textbook style" in r.text)
    assert "keep every error exactly as written" in request.text and ORIGINAL in request.text
    assert style.rewrite_answers(endpoint, "rewriter", style.selected_answers())["asked"] == 0  # kept, no call

    setting = make_setting(endpoint, name="style-judge")
    run = services.start_probe_run(setting, probe_names=["style-rewrite"], enqueue=False)
    assert run.n_items == 5 and run.skipped["style-rewrite (flagged)"] == 1
    assert run.selection["style_flagged"]["final_answer_changed_only"] == 1
    run = services.run_inline(run)
    report = style.ablation_report(run, n_resamples=200)
    assert report["n_rewrites_judged"] == 5 and report["n_flagged_excluded"] == 1
    human, synthetic, overall = report["groups"]["human"], report["groups"]["synthetic"], report["groups"]["all"]
    assert (human["n"], synthetic["n"], overall["n"]) == (3, 2, 5)
    for block in (human, synthetic, overall):
        mae, mse, fr2 = block["measures"]["mae"], block["measures"]["mse"], block["measures"]["fr_2"]
        assert (mae["a"], mae["b"], mae["difference"]) == (0.0, 2.0, 2.0)
        assert (mse["a"], mse["b"], fr2["a"], fr2["b"]) == (0.0, 4.0, 0.0, 1.0)
        assert mae["ci"] == [None, None]  # answers of fewer than 5 questions: not estimable
        assert block["interval_note"].startswith("not estimable:")
    # rewrites are never answers: no response, no judge result was made from them
    assert Response.objects.count() == 6 and not JudgeResult.objects.exists()
    assert DerivedAnswer.objects.filter(probe="style-rewrite").count() == 6


def test_rewrites_from_a_file_and_the_command_report(endpoint, llm_server, tmp_path):
    answers = _answers()
    rows = [{"response_id": a.pk, "rewritten": a.transcript.replace("first we", "First, we")} for a in answers[:4]]
    rows.append({"student_id": answers[4].student_id, "question_location": "S-2", "rewritten": "only one line"})
    rows.append({"response_id": 999999, "rewritten": "nobody"})
    path = tmp_path / "rewrites.json"
    path.write_text(json.dumps(rows))
    out = StringIO()
    call_command("style_ablation", "import", str(path), stdout=out)
    assert "5 made, 0 kept, 1 flagged, 1 unmatched records [5]" in out.getvalue()
    llm_server.default = Reply("Overall Score: 4")
    setting = make_setting(endpoint, name="style-cmd")
    out = StringIO()
    call_command("style_ablation", "run", "--setting", "style-cmd", "--inline", "--format", "json", "--bootstrap", "50",
                 stdout=out, stderr=StringIO())
    report = json.loads(out.getvalue())
    assert report["setting"] == str(setting) and report["n_rewrites_judged"] == 4
    assert report["n_flagged_excluded"] == 1 and report["n_without_rewrite"] == 1
    assert report["groups"]["all"]["measures"]["mae"]["difference"] == 0.0


def test_style_page_imports_rewrites_starts_a_run_and_the_run_page_reports(reviewer_client, endpoint, llm_server, tmp_path,
                                                                         django_capture_on_commit_callbacks):
    answers = _answers()
    rows = [{"response_id": a.pk, "rewritten": a.transcript.replace("first we", "First, we")} for a in answers]
    rows[0]["rewritten"] = "one line, so the answer is $x=9$"
    path = tmp_path / "rw.json"
    path.write_text(json.dumps(rows))
    with path.open("rb") as upload:
        page = reviewer_client.post("/grading/studies/style/", {"action": "import", "file": upload}, follow=True)
    text = page.content.decode()
    assert "6 rewrites of current texts (0 by an LLM, 6 from files): 5 usable, 1 flagged." in text
    setting = make_setting(endpoint, name="style-page")
    llm_server.default = Reply("Overall Score: 5")
    with django_capture_on_commit_callbacks(execute=True):
        started = reviewer_client.post("/grading/studies/style/", {"action": "run", "setting": setting.pk})
    text = reviewer_client.get(started["Location"]).content.decode()
    assert 'id="style-report"' in text and "5 rewrites judged with their originals: 5 in the table below." in text
    assert "1 rewrites flagged and excluded · 0 answers without a rewrite." in text
    assert 'data-group="human" data-measure="mae"' in text and 'data-group="synthetic"' in text


def test_style_page_queues_llm_rewrites(reviewer_client, endpoint, llm_server):
    _answers()
    llm_server.default = lambda payload: Reply("First, we compute $2+2=4$.\nThen $x=4-1$.\nSo the answer is $x=3$.\n(done)")
    page = reviewer_client.post("/grading/studies/style/", {"action": "rewrite", "endpoint": endpoint.pk,
                                                           "model": "rewriter"}, follow=True)
    text = page.content.decode()
    assert "Rewrites queued" in text and "6 rewrites of current texts (6 by an LLM, 0 from files): 6 usable, 0 flagged." in text
    assert llm_server.request_count == 6


def test_a_rewrite_file_over_the_import_limit_is_refused_whole(reviewer_client, settings, tmp_path):
    _answers()
    settings.IMPORT_MAX_BYTES = 10
    path = tmp_path / "big.json"
    path.write_text(json.dumps([{"response_id": 1, "rewritten": "x" * 50}]))
    with path.open("rb") as upload:
        page = reviewer_client.post("/grading/studies/style/", {"action": "import", "file": upload})
    assert "Nothing imported." in page.content.decode() and "larger than 10 bytes" in page.content.decode()
    assert not DerivedAnswer.objects.exists()


def test_notation_only_differences_keep_the_final_answer_and_lines_not_found_tell_merges_from_drops():
    """Issue 34: braces, spacing and \\dfrac do not change a final answer; a line whose content is gone is listed,
    lines merged into one are not."""
    same = style.check_rewrite("so $S_{i}=\\dfrac{1}{2}$", "Therefore $S_i = \\frac{1}{2}$.")
    assert not same["final_answer_changed"] and same["final_check"] == "same text up to notation"
    original = "Let a = 3 and b = 4\nthen c = a + b = 7\nhence the answer is 7"
    merged = style.lines_not_found(original, "Let $a = 3$ and $b = 4$, then $c = a + b = 7$.\nHence the answer is $7$.")
    assert merged == []
    dropped = style.lines_not_found(original, "Let $a = 3$ and $b = 4$.\nHence the answer is $7$.")
    assert dropped == ["then c = a + b = 7"]
    assert style.lines_not_found("17.\n(2)\nx = \\alpha + 1", "(2) $x = α + 1$") == []  # labels are not judged
