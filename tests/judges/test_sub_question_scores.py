"""Points per sub-question: the prompt asks for them only where the question has sub-questions,
the parser reads real (messy) model output and never raises, runs store them on the result."""
import json

import pytest
from django.urls import reverse

from grading.judges import prompts, services
from grading.judges.kinds import JudgeInput, JudgeSpec, get_kind
from grading.judges.parsing import OK, PARTIAL, UNPARSEABLE, label_token, parse_sub_scores
from grading.models import JudgeResult
from tests.conftest import api_client_for
from tests.factories import make_question, make_responses, make_setting
from tests.llm_server import Reply

from .helpers import run_now

MAXIMA = {"(1)": 4.0, "(2)": 6.0}


# --- parsing ---------------------------------------------------------------------------------

def test_good_json():
    parsed = parse_sub_scores('Overall Score: 7\n{"sub_scores": {"(1)": 3, "(2)": 4}}', MAXIMA)
    assert parsed.scores == {"(1)": 3.0, "(2)": 4.0} and parsed.status == OK and parsed.notes == []


def test_fenced_json_with_trailing_text_strings_and_other_spellings():
    text = """Reasoning...
Overall Score: 6.5

```json
{"Sub Scores": {" ( 1 ) ": "2.5", "part 2": "4/6",},}
```
The student lost a point in (2) for a missing justification."""
    parsed = parse_sub_scores(text, MAXIMA)
    assert parsed.scores == {"(1)": 2.5, "(2)": 4.0} and parsed.status == OK


def test_bare_object_keyed_by_labels_and_list_form():
    assert parse_sub_scores('{"1": 4, "2": 0}', MAXIMA).scores == {"(1)": 4.0, "(2)": 0.0}
    listed = '{"sub_scores": [{"label": "(1)", "points": 1}, {"label": "(2)", "points": "2"}]}'
    assert parse_sub_scores(listed, MAXIMA).scores == {"(1)": 1.0, "(2)": 2.0}
    assert parse_sub_scores('{"sub_scores": {"(I)": 1, "(II)": 2}}', {"(i)": 3, "(ii)": 3}).scores == {
        "(i)": 1.0, "(ii)": 2.0}


def test_the_right_object_is_found_among_several():
    text = '{"overall_score": 7}\n<think>{"sub_scores": {"(1)": 0, "(2)": 0}}</think>\n{"sub_scores": {"(1)": 3, "(2)": 4}}'
    assert parse_sub_scores(text, MAXIMA).scores == {"(1)": 3.0, "(2)": 4.0}


@pytest.mark.parametrize("text", [
    "", None, "Overall Score: 5", "{not json", '{"sub_scores": "many"}', '{"sub_scores": {"(1)": 3',
    "```json\n[1, 2]\n```", '{"a": {"b": {"c": 1}}}', "\x00\ud800{", "{" * 5000, '{"sub_scores": {"(1)": true}}',
])
def test_garbage_never_raises(text):
    parsed = parse_sub_scores(text, MAXIMA)
    assert parsed.status == UNPARSEABLE and parsed.scores == {}
    assert isinstance(parsed.notes, list)


def test_partial_and_unknown_labels_have_notes():
    parsed = parse_sub_scores('{"sub_scores": {"(1)": 2, "(7)": 1}}', MAXIMA)
    assert parsed.scores == {"(1)": 2.0} and parsed.status == PARTIAL
    assert any("(7)" in note for note in parsed.notes) and any("(2)" in note for note in parsed.notes)


def test_out_of_range_and_non_numbers_are_left_out_with_a_note():
    parsed = parse_sub_scores('{"sub_scores": {"(1)": 5, "(2)": -1}}', MAXIMA)
    assert parsed.scores == {} and parsed.status == UNPARSEABLE
    assert any("outside 0..4" in note for note in parsed.notes)
    parsed = parse_sub_scores('{"sub_scores": {"(1)": "three", "(2)": 6}}', MAXIMA)
    assert parsed.scores == {"(2)": 6.0} and parsed.status == PARTIAL and any("not a number" in n for n in parsed.notes)
    # Without a known maximum only negatives are out of range.
    assert parse_sub_scores('{"(1)": 50}', {"(1)": None}).scores == {"(1)": 50.0}


def test_label_tokens():
    assert {label_token(x) for x in ("(1)", " ( 1 ) ", "1", "Part 1", "sub-question 1", "3-17.(1)", "（1）")} == {"1"}
    assert label_token("(II)") == label_token("ii") == "ii"


# --- prompts and kinds -----------------------------------------------------------------------

def _input(sub_questions=()):
    return JudgeInput(response_id=1, problem="P", reference="R ------4 points", response="A", full_score=10,
                      question_kind="rubric", sub_questions=sub_questions)


def test_prompt_is_unchanged_without_sub_questions():
    kind, spec = get_kind("rubric"), JudgeSpec(kind="rubric")
    messages = kind.messages(spec, _input())
    assert messages[-1]["content"] == prompts.render(prompts.RUBRIC_TEMPLATE, kind.values(_input()))
    assert "sub_scores" not in json.dumps(messages)


def test_prompt_asks_for_points_per_sub_question():
    kind, spec = get_kind("rubric"), JudgeSpec(kind="rubric")
    text = kind.messages(spec, _input((("(1)", 4.0), ("(2)", None))))[-1]["content"]
    assert text.startswith(prompts.render(prompts.RUBRIC_TEMPLATE, kind.values(_input())))
    assert '"sub_scores": {"(1)": points, "(2)": points}' in text and "(1): 4" in text
    assert kind.fingerprint(spec, _input((("(1)", 4.0),))) != kind.fingerprint(spec, _input())


def test_other_kinds_never_ask():
    spec = JudgeSpec(kind="ineq_holistic")
    assert "sub_scores" not in json.dumps(get_kind("ineq_holistic").messages(spec, _input((("(1)", 4.0),))))


def test_samples_are_aggregated_per_label():
    kind, spec = get_kind("rubric"), JudgeSpec(kind="rubric", samples=3)
    replies = iter([
        'Overall Score: 6\n{"sub_scores": {"(1)": 2, "(2)": 4}}',
        'Overall Score: 8\n{"sub_scores": {"(1)": 4, "(2)": 4}}',
        "Overall Score: 7",  # no ledger in this sample: the others still count
    ])

    class Completion:
        def __init__(self, text):
            self.text, self.errors, self.attempts, self.latency_ms = text, [], 1, 1
            self.prompt_tokens = self.completion_tokens = 1

    outcome = kind.evaluate(spec, _input((("(1)", 4.0), ("(2)", 6.0))), lambda messages: Completion(next(replies)))
    assert outcome.status == "ok" and outcome.score == 7
    assert outcome.sub_scores == {"(1)": 3.0, "(2)": 4.0}
    assert outcome.samples[2]["sub_status"] == UNPARSEABLE


# --- runs ------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_run_stores_the_judges_points_per_sub_question(endpoint, llm_server, django_capture_on_commit_callbacks):
    with_subs = make_question("With sub-questions", location="S-01")
    without = make_question("Without sub-questions", location="S-02")
    without.sub_questions.all().delete()
    make_responses(with_subs, 2)
    make_responses(without, 1, start=5)
    llm_server.default = Reply('Fine.\nOverall Score: 7\n```json\n{"sub_scores": {"(1)": "3", "(2)": 9}}\n```')
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint))
    prompts_seen = {r.text for r in llm_server.requests}
    assert sum("sub_scores" in text for text in prompts_seen) == 2  # only the question with sub-questions
    stored = {r.response.question_id: r for r in JudgeResult.objects.select_related("response")}
    # (2)'s maximum is 5 (tests.factories): 9 is left out with a note in the sample; the overall score counts.
    assert stored[with_subs.pk].sub_scores == {"(1)": 3.0} and stored[with_subs.pk].score == 7
    assert any("outside" in note for note in stored[with_subs.pk].samples[0]["sub_notes"])
    assert stored[without.pk].sub_scores == {} and stored[without.pk].score == 7
    assert services.judge_input(stored[without.pk].response).sub_questions == ()


@pytest.mark.django_db
def test_result_page_and_api_show_points_and_rubric_version(endpoint, llm_server, django_capture_on_commit_callbacks,
                                                            reviewer, reviewer_client):
    question = make_question("Shown", location="S-03")
    make_responses(question, 1)
    llm_server.default = Reply('Overall Score: 4\n{"sub_scores": {"(1)": 1, "(2)": 3}}')
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint))
    result = JudgeResult.objects.get()
    html = reviewer_client.get(reverse("grading:judge_result_detail", args=[result.pk])).content.decode()
    assert 'id="sub-scores"' in html and "(2): 3" in html and "rubric version 1" in html
    api = api_client_for(reviewer)
    row = api.get("/api/judge-results/").json()["results"][0]
    assert row["sub_scores"] == {"(1)": 1.0, "(2)": 3.0} and row["rubric_version"] == 1
    assert api.get(f"/api/questions/{question.pk}/").json()["rubric_version"] == 1
