"""Issue 34: the paper's error-segment bundle read as released (fixtures/realmath_eval_full/error_segment_bundle/,
unchanged): 278 human + 328 synthetic segments, the group from the file name or an option, the step-split files'
steps scored by step surprisal; --limit counts segments, spread over the questions, with a file too; a transition
without step tokens is left out (and counted), not its whole segment (issue 36, item 7). The full release
itself gives 261 + 299 segments, none skipped for want of full points."""
import json
import shutil
from collections import Counter
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from grading.judges.services import RunRefused
from studies.geometry import selectors, services
from studies.geometry.models import GeometryRun
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db

BUNDLE = ROOT / "fixtures" / "realmath_eval_full" / "error_segment_bundle"
SEGMENTS = ("human_error_segments.jsonl", "llm_error_segments.jsonl")
SPLITS = ("human_error_steps_step_split.jsonl", "llm_error_steps_step_split.jsonl")


@pytest.fixture
def bundle(tmp_path):
    for name in SEGMENTS + SPLITS:
        shutil.copyfile(BUNDLE / name, tmp_path / name)
    return tmp_path


def _parse(path, **kwargs):
    return services.parse_segments_jsonl(path.read_bytes(), file_name=path.name, **kwargs)


def test_the_released_segment_files_give_278_human_and_328_synthetic_segments(bundle):
    human, llm = (_parse(bundle / name) for name in SEGMENTS)
    assert (len(human), len(llm), len(human) + len(llm)) == (278, 328, 606)
    assert {s.subset for s in human} == {"human"} and {s.subset for s in llm} == {"synthetic"}
    first = json.loads((BUNDLE / SEGMENTS[0]).read_text(encoding="utf-8").splitlines()[0])
    assert (human[0].text, human[0].sample_id, human[0].question, human[0].sub_id) == (
        first["segment_text"], first["sample_id"], first["question"], first["sub_id"])
    assert (human[0].real_score, human[0].max_score) == (6, 7.0) and human[0].steps is None
    # the step-split files say "Human" / "LLM" on each line and give the steps
    split_human, split_llm = (_parse(bundle / name) for name in SPLITS)
    assert (len(split_human), len(split_llm)) == (278, 328)
    assert {s.subset for s in split_llm} == {"synthetic"} and all(s.steps for s in split_human + split_llm)


def test_the_group_comes_from_an_option_when_the_file_name_does_not_say(bundle):
    renamed = bundle / "segments.jsonl"
    shutil.copyfile(BUNDLE / SEGMENTS[0], renamed)
    with pytest.raises(RunRefused, match=r"Line 1: no group \(analysis_subset\): give it with --segments-group"):
        _parse(renamed)
    assert {s.subset for s in _parse(renamed, group="human")} == {"human"}
    with pytest.raises(RunRefused, match=r"Line 1: analysis_subset 'LLM', but the group given is human"):
        _parse(bundle / SPLITS[1], group="human")


def test_lexical_geometry_over_the_whole_bundle_by_command(bundle):
    out = StringIO()
    call_command("error_geometry", "--lexical", "--inline", "--no-clusters", "--bootstrap", "0", "--permutations", "10",
                 "--segments-in", str(bundle / SEGMENTS[0]), "--segments-in", str(bundle / SEGMENTS[1]),
                 "--format", "json", stdout=out, stderr=StringIO())
    results = json.loads(out.getvalue())
    assert results["selection"]["source"] == "jsonl"
    assert (len(results["groups"]["human"]["segment_ids"]), len(results["groups"]["synthetic"]["segment_ids"])) == (278, 328)


def test_limit_counts_segments_with_a_file_and_spreads_them_over_the_questions(bundle):
    segments = _parse(bundle / SEGMENTS[0]) + _parse(bundle / SEGMENTS[1])
    run = services.start_run(segments=segments, limit=30, bootstrap=0, enqueue=False)
    assert run.n_items == 30 and run.selection["limit"] == 30 and run.selection["segments_found"] == 606
    questions = Counter(run.items.values_list("question", flat=True))
    assert len(questions) == len({s.question for s in segments})  # every question, not the first one's 30
    with pytest.raises(CommandError, match="Cannot read .*nope.jsonl"):
        call_command("error_geometry", "--lexical", "--inline", "--segments-in", str(bundle / "nope.jsonl"),
                     stdout=StringIO(), stderr=StringIO())


def test_step_split_files_give_the_surprisal_steps(bundle, endpoint):
    segments = _parse(bundle / SPLITS[0])
    run = services.start_run(kind=GeometryRun.Kind.SURPRISAL, endpoint=endpoint, model="causal-test",
                             segments=segments, enqueue=False)
    rows = list(run.items.order_by("id"))
    assert len(rows) == 278 and {r.splitter for r in rows} == {"file", "file-joined"}
    for row, segment in zip(rows, segments):
        pieces = [row.text[start:end] for start, end in row.steps]
        if row.splitter == "file":  # slices of the segment's own text, whitespace inside a step as the file has it
            assert row.text == segment.text and [" ".join(p.split()) for p in pieces] == [" ".join(s.split()) for s in segment.steps]
        else:  # the file's steps leave out a heading of the text: they are scored as given, joined by newlines
            assert pieces == [s.strip() for s in segment.steps] and row.text == "\n".join(pieces)
    assert Counter(r.splitter for r in rows)["file"] > 200


def glued_scorer(prompt):
    """Word tokens at -1.0, except a prompt holding "glue": one token for the whole prompt (no token of the step's own)."""
    import re

    if "glue" in prompt:
        return [(prompt, -1.0, {prompt: -1.0})]
    return [(token, -1.0, {token: -1.0}) for token in re.findall(r"\s*\S+", prompt)]


def test_a_transition_without_step_tokens_is_left_out_not_its_segment(endpoint, llm_server):
    llm_server.scorer = glued_scorer
    lines = [json.dumps({"segment_text": text, "sample_id": f"s{i}", "question": "Q", "sub_id": "(1)", "real_score": 0,
                         "max_score": 2, "analysis_subset": "human"})
             for i, text in enumerate(["human one\nalpha beta\nglue delta", "human two\nalpha beta\ngamma delta"])]
    run = services.run_inline(services.start_run(kind=GeometryRun.Kind.SURPRISAL, endpoint=endpoint, model="causal-test",
                                                 segments=services.parse_segments_jsonl("\n".join(lines)), bootstrap=0,
                                                 enqueue=False))
    assert run.analysis_state == "done", run.analysis_error
    assert run.results["counts"]["failed"] == 0 and run.results["counts"]["segments"] == 2
    assert run.results["counts"]["transitions_dropped"] == {"no step tokens": 1}
    human = run.results["groups"]["human"]
    assert (human["transitions"], human["transitions_dropped"]) == (3, 1)
    assert selectors.run_progress(run)["error"] == 0


def test_a_small_limit_on_the_release_takes_segments_of_several_questions(endpoint, tmp_path):
    """The first answers of an exam may all be of one question without an error segment; --limit counts segments
    taken in turn from each question, so step surprisal on an exam with a small limit always has some."""
    from annotation.importers import import_realmath
    from annotation.models import Exam

    path = tmp_path / "realmath_eval.json"
    shutil.copyfile(ROOT / "fixtures" / "realmath_eval_full" / "realmath_eval.json", path)
    with path.open("rb") as stream:
        import_realmath(stream, path.name)
    exam = Exam.objects.get()
    everything, _ = selectors.error_segments(exam=exam.pk)
    run = services.start_run(kind=GeometryRun.Kind.SURPRISAL, endpoint=endpoint, model="causal-test", exam=exam.pk,
                             limit=8, enqueue=False)
    assert run.n_items == 8 and run.selection["segments_found"] == len(everything)
    assert len(set(run.items.values_list("question_key", flat=True))) == 8


def test_the_full_release_gives_261_human_and_299_synthetic_segments_with_no_full_points_missing(tmp_path):
    """docs/studies.md ("On the full release"): both release files in one exam, every rubric read whole, so the
    sub-question unit cuts 560 segments (the paper's bundle: 278 + 328) and skips none for want of full points."""
    from annotation.importers import import_realmath
    from annotation.models import Exam

    for name in ("realmath_eval.json", "realmath_eval_llm_answer.json"):
        path = tmp_path / name
        shutil.copyfile(ROOT / "fixtures" / "realmath_eval_full" / name, path)
        with path.open("rb") as stream:
            import_realmath(stream, path.name, exam_name="RealMath-Eval")
    exam = Exam.objects.get()
    assert exam.questions.count() == 14
    segments, skipped = selectors.error_segments(exam=exam.pk)
    counts = Counter(s.subset for s in segments)
    assert (counts["human"], counts["synthetic"], len(segments)) == (261, 299, 560)
    assert "no full points for the sub-question" not in skipped, skipped
    assert skipped == {"no expert points for the sub-question": 2, "sub-question not found in the text": 154}
