"""Geometry and surprisal runs against the loopback server (embeddings with scripted vectors,
completions with scripted log-probabilities), the segments collected from labels, and the commands."""
import json
import math
import re
from decimal import Decimal
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from annotation.models import Label, Response, content_hash
from grading.judges.services import RunRefused
from studies.geometry import selectors, services
from studies.geometry.models import GeometrySegment, SegmentVector
from tests.factories import make_question
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


def jsonl_segments(groups):
    """Segments in the paper's JSONL shape: {subset: [text, ...]}, eight questions per group."""
    lines = []
    for subset, texts in groups.items():
        for i, text in enumerate(texts):
            lines.append(json.dumps({"segment_text": text, "sample_id": f"{subset}-{i}", "question": f"Q{i % 8}",
                                     "sub_id": "(1)", "real_score": 1, "max_score": 3, "analysis_subset": subset}))
    return services.parse_segments_jsonl("\n".join(lines))


def scripted_vectors(dims=24, seed=0):
    """Human texts get diffuse random vectors; synthetic texts four tight clusters (a "crystal")."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(4, dims))
    table = {}
    for i in range(40):
        table[f"human step {i}"] = rng.normal(size=dims).tolist()
        table[f"synthetic step {i}"] = (centres[i % 4] + 0.02 * rng.normal(size=dims)).tolist()
    return table


def embedding_inputs(server):
    return [text for r in server.requests if r.path.endswith("/embeddings") for text in r.payload["input"]]


def test_tight_group_is_less_dispersed_lower_dimensional_and_clustered(endpoint, llm_server):
    table = scripted_vectors()
    llm_server.embedder = table.__getitem__
    segments = jsonl_segments({"human": [f"human step {i}" for i in range(40)],
                               "synthetic": [f"synthetic step {i}" for i in range(40)]})
    run = services.start_run(backend="served", endpoint=endpoint, model="embed-test", segments=segments,
                             bootstrap=200, permutations=200, enqueue=False)
    run = services.run_inline(run)
    assert run.analysis_state == "done", run.analysis_error
    human, synthetic = run.results["groups"]["human"], run.results["groups"]["synthetic"]
    assert synthetic["dispersion"] < human["dispersion"]
    assert synthetic["top10_share"] > human["top10_share"]
    assert synthetic["clusters"] == 4 and synthetic["noise_share"] == 0  # the four planted clusters, no noise
    assert human["noise_share"] > synthetic["noise_share"]  # HDBSCAN leaves part of the cloud unclustered
    assert synthetic["silhouette"] > 0.9 > (human["silhouette"] or 0)
    assert synthetic["dispersion_ci"][0] <= synthetic["dispersion"] <= synthetic["dispersion_ci"][1]
    test = run.results["human_vs_synthetic"]["dispersion"]
    assert test["difference"] > 0 and test["p"] < 0.01
    assert run.results["model"] == "embed-test" and run.results["endpoint"]["base_url"] == llm_server.url
    assert run.results["label"] == "served model" and run.results["seeds"]["umap"] == 42
    assert sorted(embedding_inputs(llm_server)) == sorted(table)  # each text asked once
    # A second run of the same texts asks nothing: vectors are cached by model and text hash.
    services.run_inline(services.start_run(backend="served", endpoint=endpoint, model="embed-test",
                                           segments=segments, cluster=False, bootstrap=0, enqueue=False))
    assert len(embedding_inputs(llm_server)) == len(table)


def test_a_killed_chunk_resumes_without_asking_again_for_a_cached_vector(endpoint, llm_server, monkeypatch):
    texts = [f"segment number {i}" for i in range(24)]
    run = services.start_run(backend="served", endpoint=endpoint, model="embed-test", chunk_size=8,
                             segments=jsonl_segments({"human": texts[:12], "synthetic": texts[12:]}),
                             cluster=False, bootstrap=0, permutations=0, enqueue=False)
    ids = list(run.items.order_by("id").values_list("pk", flat=True))
    services.process_chunk(run.pk, run.epoch, ids[:8], task_id="first", analyse_after=lambda run_id: None)
    real_finish = services._finish

    def killed(items, owner, state, **kwargs):  # the worker dies after storing the vectors, before marking
        if state == GeometrySegment.State.OK and items and items[0].pk in ids[8:16]:
            raise SystemExit("killed")
        return real_finish(items, owner, state, **kwargs)

    monkeypatch.setattr(services, "_finish", killed)
    with pytest.raises(SystemExit):
        services.process_chunk(run.pk, run.epoch, ids[8:16], task_id="second", analyse_after=lambda run_id: None)
    monkeypatch.setattr(services, "_finish", real_finish)
    assert SegmentVector.objects.filter(model="embed-test").count() == 16
    assert run.items.filter(state="pending").count() == 16  # the killed chunk's segments are still open
    services.cancel_run(run)
    run = services.resume_run(run, enqueue=False)
    assert run.epoch == 2
    run = services.run_inline(run)
    assert run.analysis_state == "done", run.analysis_error
    assert sorted(embedding_inputs(llm_server)) == sorted(texts)  # no text was asked twice
    assert run.items.filter(state="ok").count() == 24


def test_failed_embedding_calls_mark_segments_failed_and_resume_retries(endpoint, llm_server):
    llm_server.script("flaky", *[Reply(status=500)] * 4)
    run = services.start_run(backend="served", endpoint=endpoint, model="embed-test",
                             segments=jsonl_segments({"human": ["flaky text", "fine text"]}), cluster=False,
                             bootstrap=0, enqueue=False)
    run = services.run_inline(run)
    assert run.items.filter(state="error").count() == 2  # one batch, four failed attempts
    assert run.analysis_state == "done" and run.results["counts"]["failed"] == 2
    run = services.run_inline(services.resume_run(run, enqueue=False))
    assert run.items.filter(state="ok").count() == 2
    assert run.analysis_state == "done" and run.results["counts"] == {"segments": 2, "failed": 0, "human": 2, "synthetic": 0,
                                                                 "probe-derived": 0}


def surprisal_scorer(prompt):
    """Word tokens; "\\n"+word tokens carry -2.0 for human steps and -0.5 for synthetic, others
    -1.0; at each step's first position the top-k holds " x" and the step's second word."""
    rows, words = [], re.findall(r"\s*\S+", prompt)
    for index, token in enumerate(words):
        if token.startswith("\n"):
            logprob = -2.0 if "human" in prompt else -0.5
            nxt = words[index + 1] if index + 1 < len(words) else " none"
            top = {" x": -0.1, nxt: -1.2}
        else:
            logprob, top = -1.0, {token: -1.0}
        rows.append((token, logprob, top))
    return rows


def test_surprisal_figures_are_the_hand_computed_ones(endpoint, llm_server):
    llm_server.scorer = surprisal_scorer
    # Each segment: three lines = two transitions; each step is two words.
    segments = jsonl_segments({"human": ["human one\nalpha beta\ngamma delta"] * 2 + ["human two\nalpha beta"],
                               "synthetic": ["synthetic one\nalpha beta\ngamma delta"]})
    out = StringIO()
    run = services.run_inline(services.start_run(kind="surprisal", endpoint=endpoint, model="causal-test",
                                                 segments=segments, bootstrap=100, enqueue=False))
    assert run.analysis_state == "done", run.analysis_error
    human, synthetic = run.results["groups"]["human"], run.results["groups"]["synthetic"]
    # Each transition's step: "\nword" (-2.0 human, -0.5 synthetic) then " word" (-1.0).
    assert human["transitions"] == 5 and synthetic["transitions"] == 2
    assert human["surprisal"]["mean"] == pytest.approx((2.0 + 1.0) / 2)
    assert synthetic["surprisal"]["mean"] == pytest.approx((0.5 + 1.0) / 2)
    # LL: the best of the first token (e^-2 or e^-0.5) and the second word in the top-k (e^-1.2).
    assert human["ll"]["mean"] == pytest.approx(math.exp(-1.2))
    assert synthetic["ll"]["mean"] == pytest.approx(math.exp(-0.5))
    assert human["ll_lower_bound"] == 0 and human["top_k"] == 5
    completions = [r for r in llm_server.requests if r.path.endswith("/completions")]
    assert len(completions) == 3 + 2  # the repeated human segment's prompts were asked once
    assert all(r.payload["echo"] is True and r.payload["logprobs"] == 5 for r in completions)
    assert out.getvalue() == ""


def test_step_surprisal_command(endpoint, llm_server, tmp_path):
    path = tmp_path / "segments.jsonl"
    path.write_text("\n".join(json.dumps({"segment_text": f"{s} step\nbeta gamma", "sample_id": s, "question": "Q", "sub_id": "(1)",
                                          "real_score": 0, "max_score": 2, "analysis_subset": s})
                              for s in ("human", "synthetic")))
    out = StringIO()
    call_command("step_surprisal", "--base-url", llm_server.url, "--model", "causal-test", "--api-key-env",
                 "REALMATH_LLM_KEY_TEST", "--segments-in", str(path), "--inline", "--format", "json", stdout=out,
                 stderr=StringIO())
    results = json.loads(out.getvalue())
    assert results["study"] == "step_surprisal" and results["model"] == "causal-test"
    assert set(results["groups"]) == {"human", "synthetic"}
    # The default scorer: -0.1 per character; the step's tokens "\nbeta" (5) and " gamma" (6).
    assert results["groups"]["human"]["surprisal"]["mean"] == pytest.approx(0.55)


def test_refusals(endpoint):
    with pytest.raises(RunRefused, match="No error segment"):
        services.start_run(enqueue=False)
    with pytest.raises(RunRefused, match="endpoint and a model"):
        services.start_run(backend="served", endpoint=endpoint, model="", segments=jsonl_segments({"human": ["a"]}))
    for bad, message in (("{", "Line 1: not JSON"), ('{"segment_text": "a"}', "Line 1: missing sample_id"),
                         (json.dumps({"segment_text": "a", "sample_id": 1, "question": "q", "sub_id": "", "real_score": 1,
                                      "max_score": 2, "analysis_subset": "robots"}), "human, synthetic or probe-derived"),
                         ("", "no segment")):
        with pytest.raises(RunRefused, match=message):
            services.parse_segments_jsonl(bad)


# --- segments from labels ---------------------------------------------------------------------

def answer(question, student, text, gold, sub_scores, *, source="human", status="imported"):
    response = Response.objects.create(question=question, student_id=student, transcript=text, source=source,
                                       transcript_hash=content_hash(text), gold_score=Decimal(gold), gold_status=status)
    Label.objects.create(response=response, is_imported=True, total=gold, sub_scores=sub_scores, submitted=True)
    return response


def test_error_segments_are_the_sub_questions_below_full_points(db):
    question = make_question()  # sub-questions (1) and (2), 5 points each
    text = "17.\n(1) x = 2, so fine.\n(2) x = 3 therefore wrong."
    lost = answer(question, "s1", text, 7, {"3-17.(1)": 5, "3-17.(2)": 2})
    answer(question, "s2", "(1) a\n(2) b", 10, {"(1)": 5, "(2)": 5})  # full points: no segment
    answer(question, "s3", "(1) a\n(2) b", 3, {"(1)": 1, "(2)": 2}, status="single")  # one expert's gold: left out
    answer(question, "s4", "no markers here", 4, {"(1)": 2, "(2)": 2})  # cannot be placed: counted
    segments, skipped = selectors.error_segments()
    assert [(s.sample_id, s.sub_id, s.text, s.real_score, s.max_score) for s in segments] == [
        ("s1", "(2)", "(2) x = 3 therefore wrong.", 2.0, 5.0)]
    assert segments[0].response_id == lost.pk and segments[0].subset == "human" and segments[0].gold == 7.0
    assert skipped == {"sub-question not found in the text": 2}
    record = segments[0].as_jsonl()
    assert list(record)[:7] == list(selectors.JSONL_FIELDS)
    assert record["analysis_subset"] == "human"
    again = services.parse_segments_jsonl(selectors.segments_jsonl(segments))
    assert (again[0].text, again[0].sub_id, again[0].real_score, again[0].subset) == ("(2) x = 3 therefore wrong.", "(2)", 2.0, "human")


def test_lexical_command_over_a_release_import(tmp_path):
    from tests.conftest import REALMATH_HUMAN

    call_command("import_realmath", str(REALMATH_HUMAN), verbosity=0)
    synthetic = str(REALMATH_HUMAN).replace("realmath_eval.json", "realmath_eval_llm_answer.json")
    call_command("import_realmath", synthetic, verbosity=0)
    out, segments_out = StringIO(), tmp_path / "segments.jsonl"
    call_command("error_geometry", "--lexical", "--no-clusters", "--inline", "--bootstrap", "50", "--permutations", "50",
                 "--format", "json", "--segments-out", str(segments_out), stdout=out, stderr=StringIO())
    results = json.loads(out.getvalue())
    assert results["label"] == "lexical baseline, not semantic" and results["backend"] == "lexical"
    assert results["model"] is None and results["params"]["lexical"]["analyzer"] == "char_wb"
    assert results["counts"]["human"] > 10 and results["counts"]["synthetic"] > 10
    records = [json.loads(line) for line in segments_out.read_text().splitlines()]
    assert len(records) == results["counts"]["segments"]
    assert {r["analysis_subset"] for r in records} == {"human", "synthetic"}
    texts = {r.transcript for r in Response.objects.all()}
    assert all(any(r["segment_text"] in t for t in texts) for r in records)  # slices of the transcripts
    # The exported segments analyse again, read back from the paper's shape.
    again = StringIO()
    call_command("error_geometry", "--lexical", "--no-clusters", "--inline", "--bootstrap", "50", "--permutations",
                 "50", "--segments-in", str(segments_out), "--format", "json", stdout=again, stderr=StringIO())
    assert json.loads(again.getvalue())["groups"]["human"]["dispersion"] == pytest.approx(
        results["groups"]["human"]["dispersion"])


def test_llm_splitter_is_kept_only_when_it_reproduces_the_text(endpoint, llm_server):
    llm_server.scorer = surprisal_scorer
    # The model splits the first segment faithfully and rewrites the second (a changed number).
    llm_server.script("human first", Reply("Step 1: human first alpha\nStep 2: beta gamma. delta epsilon"))
    llm_server.script("human second", Reply("Step 1: human second\nStep 2: alpha beta = 4"))
    segments = jsonl_segments({"human": ["human first alpha beta gamma. delta epsilon", "human second\nalpha beta = 3"]})
    run = services.run_inline(services.start_run(kind="surprisal", endpoint=endpoint, model="causal-test",
                                                 segments=segments, splitter="llm", bootstrap=0, enqueue=False))
    assert run.analysis_state == "done", run.analysis_error
    first, second = run.items.order_by("id")
    assert first.splitter == "llm" and [first.text[a:b] for a, b in first.steps] == [
        "human first alpha", "beta gamma. delta epsilon"]
    assert second.splitter == "llm-fallback"
    assert [second.text[a:b] for a, b in second.steps] == ["human second", "alpha beta = 3"]  # the rule-based split
    assert run.results["counts"]["splitter"] == {"llm": 1, "llm-fallback": 1}
    assert run.params["splitter_model"] == "causal-test"
    chats = [r for r in llm_server.requests if r.path.endswith("/chat/completions")]
    assert len(chats) == 2 and "Copy the text exactly" in chats[0].text
    # A resumed run does not ask for the split again: it is stored on the segment.
    services.resume_run(run, enqueue=False)
    assert len([r for r in llm_server.requests if r.path.endswith("/chat/completions")]) == 2


def test_step_label_segments_are_the_spans_experts_marked_wrong(db):
    from annotation.models import StepLabel

    question = make_question()
    text = "(1) x = 2.\n(2) x = 3, so x^2 = 10."
    response = answer(question, "s1", text, 6, {"(1)": 5, "(2)": 1})
    label = response.labels.get()
    sub = question.sub_questions.get(label="(2)")
    start = text.index("x^2 = 10")
    StepLabel.objects.create(label=label, sub_question=sub, start=start, end=start + 8, verdict="calculation_error",
                             awarded_points=0)
    StepLabel.objects.create(label=label, start=0, end=3, verdict="correct")
    StepLabel.objects.create(label=label, start=4, end=9, verdict="logical_gap", needs_review=True)
    segments, skipped = selectors.error_segments(unit="step_label")
    assert [(s.text, s.unit, s.real_score, s.max_score) for s in segments] == [("x^2 = 10", "step_label", 0.0, 5.0)]
    assert skipped == {"span not placed in the text": 1}


def test_cancel_before_the_analysis_starts_and_resume_analyses(db):
    segments = jsonl_segments({"human": [f"human step {i}" for i in range(6)],
                               "synthetic": [f"synthetic step {i}" for i in range(6)]})
    run = services.start_run(segments=segments, bootstrap=10, permutations=10, cluster=False, enqueue=False)
    assert (run.status, run.analysis_state) == ("done", "")
    assert selectors.run_progress(run)["can_cancel"] is True
    run = services.cancel_run(run)
    assert (run.status, run.analysis_state) == ("cancelled", "cancelled")
    progress = selectors.run_progress(run)
    assert progress["finished"] and progress["can_resume"] and not progress["can_cancel"]
    assert services.analyse(run.pk) is False  # a queued analysis task finds nothing to do
    run = services.resume_run(run, enqueue=False)
    assert (run.status, run.analysis_state) == ("done", "")
    run = services.run_inline(run)
    assert run.analysis_state == "done" and run.results["counts"]["human"] == 6
    assert services.cancel_run(run).status == "done"  # an analysed run has nothing to stop


def test_llm_splitter_on_its_own_endpoint(endpoint, llm_server):
    from tests.factories import make_endpoint
    from tests.llm_server import LlmServer

    llm_server.scorer = surprisal_scorer
    with LlmServer() as chat_server:
        chat_server.script("human first", Reply("Step 1: human first alpha\nStep 2: beta gamma"))
        splitter = make_endpoint(chat_server)
        segments = jsonl_segments({"human": ["human first alpha beta gamma"]})
        run = services.run_inline(services.start_run(
            kind="surprisal", endpoint=endpoint, model="causal-test", segments=segments, splitter="llm",
            splitter_model="chat-test", splitter_endpoint=splitter, bootstrap=0, enqueue=False))
        chats = [r.payload for r in chat_server.requests]
    assert run.analysis_state == "done", run.analysis_error
    assert [c["model"] for c in chats] == ["chat-test"] and run.params["splitter_endpoint"] == splitter.pk
    assert not [r for r in llm_server.requests if r.path.endswith("/chat/completions")]  # none on the causal model's
    assert run.items.get().splitter == "llm" and run.results["groups"]["human"]["transitions"] == 1
