"""Re-judging after a rubric edit: only the edited question, only the settings that judged it
against an older rubric, through the ordinary runs (real OpenAI client, loopback server)."""
import hashlib
import re

import pytest

from annotation import services as annotation_services
from grading.judges import selectors, services
from grading.judges.kinds import get_kind
from grading.models import JudgeResult, JudgeRun, MetaEvaluation
from grading.review import selectors as review_selectors
from tests.factories import make_checkpoints, make_question, make_responses, make_setting, set_gold
from tests.llm_server import Reply, message_text

from .helpers import run_now

pytestmark = pytest.mark.django_db


class Scores:
    """A scripted judge: 'Answer N' gets table[N]; the table can be swapped between rounds."""

    def __init__(self, table):
        self.table = table

    def __call__(self, payload):
        match = re.search(r"Answer (\d+):", message_text(payload))
        value = self.table.get(int(match.group(1)), 5) if match else 5
        return Reply(f"Reasoning.\n\nOverall Score: {value}\n\nBrief explanation.")


@pytest.fixture
def study(endpoint, llm_server, django_capture_on_commit_callbacks):
    """Question A (4 answers, gold 5) and B (2 answers); settings s1 and s2 judged both, s3 only B."""
    a = make_question("Question A: solve $x^2 = 4$.", location="A-01")
    b = make_question("Question B: solve $x^2 = 9$.", location="B-01")
    make_checkpoints(a)
    answers_a, answers_b = make_responses(a, 4), make_responses(b, 2, start=10)
    set_gold(answers_a + answers_b, [5, 5, 5, 5, 5, 5])
    scores = Scores({0: 8, 1: 3, 2: 5, 3: 6, 10: 4, 11: 5})
    llm_server.default = scores
    s1, s2, s3 = (make_setting(endpoint, name=name) for name in ("s1", "s2", "s3"))
    ids_a, ids_b = [r.pk for r in answers_a], [r.pk for r in answers_b]
    for setting in (s1, s2):
        run_now(django_capture_on_commit_callbacks, setting, response_ids=ids_a + ids_b)
    run_now(django_capture_on_commit_callbacks, s3, response_ids=ids_b)
    assert llm_server.request_count == 14
    return {"a": a, "b": b, "ids_a": ids_a, "ids_b": ids_b, "settings": (s1, s2, s3), "scores": scores}


def test_results_record_the_rubric_version(study):
    assert set(JudgeResult.objects.values_list("rubric_version", flat=True)) == {1}
    assert selectors.stale_settings(study["a"]) == []  # never edited: nothing is stale


def test_rejudge_touches_only_the_edited_question_and_the_settings_that_used_it(
    study, llm_server, django_capture_on_commit_callbacks
):
    s1, s2, s3 = study["settings"]
    a = annotation_services.edit_rubric(study["a"], reference_solution="(1) x = 2 ------4 points\n(2) x = -2 ------10 points")
    assert a.rubric_version == 2
    stale = selectors.stale_settings(a)
    assert [(e["setting"], e["response_ids"], e["versions"]) for e in stale] == [
        (s1, study["ids_a"], [1]), (s2, study["ids_a"], [1]),
    ]
    before_b = list(JudgeResult.objects.filter(response_id__in=study["ids_b"]).values_list("pk", "score"))
    old_a = set(JudgeResult.objects.filter(response_id__in=study["ids_a"]).values_list("pk", flat=True))
    calls_before = llm_server.request_count
    study["scores"].table = {0: 5, 1: 5, 2: 6, 3: 4}
    with django_capture_on_commit_callbacks(execute=True):
        runs, refused = services.rejudge_question(a)
    assert refused == [] and len(runs) == 2
    assert {run.setting for run in runs} == {s1, s2}
    assert all(JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE for run in runs)
    new_requests = llm_server.requests[calls_before:]
    assert len(new_requests) == 8  # 4 answers x 2 settings: the cache key changed with the rubric
    assert all("Question A" in r.text and "------4 points" in r.text for r in new_requests)
    # Old results are kept; the new ones name rubric version 2 and are the current ones.
    assert old_a <= set(JudgeResult.objects.values_list("pk", flat=True))
    new = JudgeResult.objects.filter(response_id__in=study["ids_a"]).exclude(pk__in=old_a)
    assert new.count() == 8 and set(new.values_list("rubric_version", flat=True)) == {2}
    assert list(JudgeResult.objects.filter(response_id__in=study["ids_b"]).values_list("pk", "score")) == before_b
    assert not s3.runs.filter(pk__in=[r.pk for r in runs]).exists()
    current = review_selectors.current_results(review_selectors.Scope(setting=s1))
    assert sorted(current.filter(response_id__in=study["ids_a"]).values_list("score", flat=True)) == [4, 5, 5, 6]
    assert current.count() == 6  # one per response, as before the edit
    # Nothing is stale any more: a second press calls nothing.
    assert selectors.stale_settings(a) == []
    with django_capture_on_commit_callbacks(execute=True):
        assert services.rejudge_question(a) == ([], [])
    assert len(llm_server.requests) == calls_before + 8


def test_rejudge_only_the_chosen_settings(study, llm_server, django_capture_on_commit_callbacks):
    s1, s2, _ = study["settings"]
    a = annotation_services.edit_rubric(study["a"], reference_solution=study["a"].reference_solution, full_score=12)
    with django_capture_on_commit_callbacks(execute=True):
        runs, _ = services.rejudge_question(a, setting_ids=[s2.pk])
    assert [run.setting for run in runs] == [s2]
    assert [e["setting"] for e in selectors.stale_settings(a)] == [s1]


def test_before_and_after_figures(study, llm_server, django_capture_on_commit_callbacks):
    s1, s2, _ = study["settings"]
    old = {r.response_id: r for r in JudgeResult.objects.filter(setting=s1, response_id__in=study["ids_a"])}
    MetaEvaluation.objects.create(result=old[study["ids_a"][0]], category="A", direction="over",
                                  judge_score=8, gold_score=5)
    a = annotation_services.edit_rubric(study["a"], reference_solution="(1) x = 2 ------4 points\n(2) x = -2 ------10 points")
    study["scores"].table = {0: 5, 1: 5, 2: 6, 3: 4}
    with django_capture_on_commit_callbacks(execute=True):
        services.rejudge_question(a, setting_ids=[s1.pk])
    report = review_selectors.rubric_comparison(a)
    rows = {row["setting"].name: row for row in report["settings"]}
    before, after = rows["s1"]["before"], rows["s1"]["after"]
    # Before: judge 8, 3, 5, 6 against gold 5 -> deltas 3, -2, 0, 1.
    assert before["n"] == 4 and before["mse"] == pytest.approx(3.5) and before["fr_2"] == pytest.approx(0.5)
    assert before["categories"] == [1, 0, 0, 0, 0] and before["unclassified"] == 1
    assert before["rubric_versions"] == [1]
    # After: judge 5, 5, 6, 4 -> deltas 0, 0, 1, -1.
    assert after["n"] == 4 and after["mse"] == pytest.approx(0.5) and after["fr_2"] == 0
    assert after["categories"] == [0, 0, 0, 0, 0] and after["unclassified"] == 0
    assert after["rubric_versions"] == [2] and rows["s1"]["stale"] == 0
    # s2 was not re-judged: before only.
    assert rows["s2"]["after"] is None and rows["s2"]["stale"] == 4
    assert rows["s2"]["before"]["mse"] == pytest.approx(3.5)


def test_cache_key_of_an_unedited_question_is_unchanged(study):
    s1 = study["settings"][0]
    result = JudgeResult.objects.filter(setting=s1, response_id=study["ids_a"][0]).get()
    response = result.response
    kind, spec = get_kind(s1.kind), services.judge_spec(s1)
    fingerprint = kind.fingerprint(spec, services.judge_input(response))
    old_formula = hashlib.sha256(f"{s1.pk}:{s1.name}:{s1.version}\n".encode())
    old_formula.update(fingerprint.encode("utf-8"))
    assert result.cache_key == old_formula.hexdigest() == services.cache_key(s1, fingerprint, 1)
    assert services.cache_key(s1, fingerprint, 2) != result.cache_key


def test_which_settings_are_offered():
    from tests.factories import make_results, make_stored_setting

    question = make_question("Offered", location="O-01")
    make_checkpoints(question)
    answers = make_responses(question, 2)
    kinds = {
        "rubric": make_stored_setting("k-rubric", kind="rubric"),
        "holistic": make_stored_setting("k-holistic", kind="ineq_holistic"),
        "custom": make_stored_setting("k-custom", kind="ineq_holistic", prompt_template="Use {{ reference }}."),
        "replay": make_stored_setting("k-replay", kind="replay"),
        "external": make_stored_setting("k-external", kind="external"),
    }
    for name, setting in kinds.items():
        make_results(setting, answers, [1, 2], key_prefix=name)  # rubric_version empty: before versions existed
    question = annotation_services.edit_rubric(question, reference_solution="(1) x ------2 points")
    offered = {entry["setting"].name: entry["reads_rubric"] for entry in selectors.stale_settings(question)}
    assert offered == {"k-rubric": True, "k-holistic": False, "k-custom": True}
