"""Probe-derived error segments: the errors the sensitivity probes put into answers (their derived
answers), as a third group beside human and synthetic, chosen on the command and the page, in
the JSONL's analysis_subset, and analysed as a group of their own."""
import json
from io import StringIO

import pytest
from django.core.management import call_command

from grading.judges.services import RunRefused
from studies import probes
from studies.geometry import selectors, services, steps
from studies.models import DerivedAnswer
from tests.factories import make_question
from tests.studies.test_geometry_runs import answer

pytestmark = pytest.mark.django_db

TEXT = "(1) $2 \\cdot 3 = 6$ so x = 6.\n(2) y is found.\nAnswer: $\\boxed{6}$"


def derive(response, name, seed=0):
    made = probes.derive(name, response.transcript, seed)
    assert made is not None, name
    return DerivedAnswer.objects.create(response=response, probe=name, seed=seed, source_hash="h",
                                        original_text=response.transcript, text=made.text, change=made.change)


def test_the_change_point_and_the_span_holding_it():
    assert steps.change_point("abc\ndef", "abc\nxef") == 4
    assert steps.change_point("abc\ndef", "abc") == 3  # a removed last line: the end of the rest
    spans = {"(1)": (0, 10), "(2)": (10, 20)}
    assert steps.span_at(spans, 3) == "(1)" and steps.span_at(spans, 10) == "(2)" and steps.span_at(spans, 20) == "(2)"
    assert steps.span_at({"(1)": (5, 9)}, 2) is None
    assert steps.line_at("ab\ncd\nef", 4) == (3, 5)


def test_probe_derived_segments_are_the_sub_questions_a_sensitivity_probe_changed():
    question = make_question()  # (1) and (2), 5 points each
    full = answer(question, "s1", TEXT, 10, {"(1)": 5, "(2)": 5})  # full points: no human segment
    slip = derive(full, "arithmetic-slip")
    dropped = derive(full, "drop-final-answer")
    derive(full, "drop-final-answer", seed=1)  # the same derived text again: one segment
    derive(full, "notation-swap")  # an invariance probe: no error, no segment
    segments, skipped = selectors.error_segments(sources=["human", "probe-derived"])
    assert [(s.subset, s.source, s.probe, s.sub_id) for s in segments] == [
        ("probe-derived", "probe-derived", "arithmetic-slip", "(1)"),
        ("probe-derived", "probe-derived", "drop-final-answer", "(2)")]
    assert segments[0].text == slip.text.split("\n")[0] != TEXT.split("\n")[0]  # the slipped sub-question (1)
    assert segments[1].text == dropped.text[dropped.text.index("(2)"):].strip() == "(2) y is found."
    assert all(s.real_score is None and s.gold is None and s.max_score == 5.0 for s in segments)
    assert all(s.response_id == full.pk and s.sample_id == "s1" for s in segments)
    record = segments[0].as_jsonl()
    assert record["analysis_subset"] == "probe-derived" and record["probe"] == "arithmetic-slip"
    # Read back from the paper's shape: the group and the probe are kept.
    again = services.parse_segments_jsonl(selectors.segments_jsonl(segments))
    assert [(s.subset, s.probe) for s in again] == [("probe-derived", "arithmetic-slip"), ("probe-derived", "drop-final-answer")]
    # Without probe-derived, none of them; step-label unit: only the slipped line has a span.
    assert selectors.error_segments()[0] == []
    lines, skipped = selectors.error_segments(unit="step_label", sources=["probe-derived"])
    assert [(s.probe, s.text) for s in lines] == [("arithmetic-slip", slip.text.split("\n")[0])]
    assert skipped == {"probe removed text: no span": 1}


def test_a_lexical_study_with_probe_derived_segments_by_command(tmp_path):
    question = make_question()
    for i in range(6):
        text = TEXT.replace("y is found", f"y is found by method {i}")
        response = answer(question, f"h{i}", text.replace("so x = 6", f"so x = {i}"), 7, {"(1)": 2, "(2)": 5})
        derive(response, "truncate-last-step")
        derive(response, "drop-final-answer")
    out, path = StringIO(), tmp_path / "segments.jsonl"
    call_command("error_geometry", "--lexical", "--no-clusters", "--inline", "--bootstrap", "20", "--permutations", "20",
                 "--source", "human", "--source", "probe-derived", "--format", "json", "--segments-out", str(path),
                 stdout=out, stderr=StringIO())
    results = json.loads(out.getvalue())
    assert results["selection"]["sources"] == ["human", "probe-derived"]
    assert results["counts"]["human"] == 6 and results["counts"]["probe-derived"] == 12 and results["counts"]["synthetic"] == 0
    assert set(results["groups"]) == {"human", "probe-derived"}
    assert results["human_vs_probe_derived"]["dispersion"]["permutations"] == 20
    assert "human_vs_synthetic" not in results
    subsets = [json.loads(line)["analysis_subset"] for line in path.read_text().splitlines()]
    assert subsets.count("probe-derived") == 12 and subsets.count("human") == 6


def test_an_unknown_source_is_refused():
    with pytest.raises(RunRefused, match="Unknown source"):
        services.start_run(sources=["robots"], enqueue=False)
