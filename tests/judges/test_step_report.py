"""The rubric judge's step report (issue 37): a setting option asks, besides the score, for the first
wrong step of the answer and each checkpoint reached, in a JSON block; the parser reads it or says it
could not (never guessing), the score counts either way, a run stores it on the result, the scripted
model answers it, the setting form offers it."""
import pytest
from django.urls import reverse

from grading.judges import prompts
from grading.judges.kinds import JudgeInput, JudgeSpec, get_kind
from grading.judges.parsing import OK, PARTIAL, UNPARSEABLE, parse_step_report
from grading.models import JudgeResult, JudgeSetting
from llm import scripted
from tests.factories import make_checkpoints, make_question, make_responses, make_setting
from tests.llm_server import Reply

from .conftest import form_data
from .helpers import run_now

STEPS = ("First we set a = 1.", "Then b = 2.", "So c = 3.")
CHECKPOINTS = (("(1)", 5.0, "(1) x = 2"), ("(2)", 10.0, "(2) x = -2"))


def _input(steps=STEPS, checkpoints=CHECKPOINTS):
    return JudgeInput(response_id=1, problem="P", reference="(1) x = 2 ------5 points\n(2) x = -2 ------10 points",
                      response=" ".join(STEPS), full_score=10, question_kind="rubric", steps=steps,
                      checkpoints=checkpoints)


class _Completion:
    def __init__(self, text):
        self.text, self.errors, self.attempts, self.latency_ms = text, [], 1, 1
        self.prompt_tokens = self.completion_tokens = 1


# --- parsing ---------------------------------------------------------------------------------

def test_a_good_block():
    text = ('Overall Score: 5\n```json\n{"step_report": {"first_wrong_step": 2, '
            '"checkpoints_reached": {"1": true, "2": false}}}\n```')
    parsed = parse_step_report(text, 3, 2)
    assert (parsed.status, parsed.first_wrong_step, parsed.first_wrong_step_read) == (OK, 2, True)
    assert parsed.checkpoints == {"1": True, "2": False} and parsed.notes == []


def test_none_and_other_spellings_are_read():
    text = '{"first_wrong_step": "none", "checkpoints_reached": {"C1": "yes", "checkpoint 2": "Reached"}}'
    parsed = parse_step_report(text, 3, 2)
    assert parsed.status == OK and parsed.first_wrong_step is None and parsed.first_wrong_step_read
    assert parsed.checkpoints == {"1": True, "2": True}
    listed = parse_step_report('{"step_report": {"first_wrong_step": "step 3", "checkpoints_reached": [false, true]}}', 3, 2)
    assert (listed.first_wrong_step, listed.checkpoints, listed.status) == (3, {"1": False, "2": True}, OK)
    assert parse_step_report('{"step_report": {"first_wrong_step": null}}', 3, 0).status == OK


def test_the_block_is_found_beside_the_sub_scores_and_outside_thinking():
    text = ('<think>{"step_report": {"first_wrong_step": 1}}</think>Overall Score: 7\n'
            '{"sub_scores": {"(1)": 3}}\n{"step_report": {"first_wrong_step": 3, "checkpoints_reached": {"1": 1, "2": "no"}}}')
    parsed = parse_step_report(text, 3, 2)
    # 1 is not true or false: that checkpoint is left out, never guessed
    assert parsed.first_wrong_step == 3 and parsed.checkpoints == {"2": False} and parsed.status == PARTIAL
    assert any("checkpoint 1" in note for note in parsed.notes)


@pytest.mark.parametrize("text", [
    "", None, "Overall Score: 5", "{not json", '{"step_report": "step 2"}', '{"step_report": {"first_wrong_step": 9}}',
    '{"step_report": {"first_wrong_step": true, "checkpoints_reached": {"7": true}}}', "\x00\ud800{", "{" * 5000,
    '{"step_report": {"first_wrong_step": 2.5, "checkpoints_reached": [true]}}', '{"step_report": {"first_wrong_step": ""}}',
    '{"first_wrong_step": -1, "checkpoints_reached": {"1": "maybe"}}',
])
def test_bad_replies_are_unreadable_never_guessed(text):
    parsed = parse_step_report(text, 3, 2)
    assert parsed.status == UNPARSEABLE and parsed.checkpoints == {} and not parsed.first_wrong_step_read
    assert parsed.first_wrong_step is None and isinstance(parsed.notes, list) and parsed.notes


def test_an_out_of_range_step_is_a_note():
    parsed = parse_step_report('{"step_report": {"first_wrong_step": 4, "checkpoints_reached": {"1": true, "2": true}}}', 3, 2)
    assert parsed.status == PARTIAL and not parsed.first_wrong_step_read and "outside 1..3" in parsed.notes[0]


# --- the prompt and the kind -----------------------------------------------------------------

def test_the_prompt_asks_only_when_the_setting_does():
    kind = get_kind("rubric")
    plain = kind.messages(JudgeSpec(kind="rubric"), _input())[-1]["content"]
    asked = kind.messages(JudgeSpec(kind="rubric", step_report=True), _input())[-1]["content"]
    assert "step_report" not in plain and asked.startswith(plain)
    assert "[2] Then b = 2." in asked and 'C2 (sub-question (2), 10 points): ends with "(2) x = -2"' in asked
    assert '"checkpoints_reached": {"1": true or false, "2": true or false}' in asked
    assert kind.fingerprint(JudgeSpec(kind="rubric", step_report=True), _input()) != kind.fingerprint(
        JudgeSpec(kind="rubric"), _input())
    # Without checkpoints only the step is asked.
    steps_only = prompts.step_report_request(STEPS, [])
    assert "checkpoints_reached\": {}" in steps_only and "rubric's checkpoints" not in steps_only


def test_an_unreadable_block_keeps_the_score_and_says_so():
    kind, spec = get_kind("rubric"), JudgeSpec(kind="rubric", step_report=True)
    outcome = kind.evaluate(spec, _input(), lambda messages: _Completion("Overall Score: 6\n{\"step_report\": oops"))
    assert outcome.status == "ok" and outcome.score == 6
    report = outcome.step_verdicts["step_report"]
    assert report["status"] == UNPARSEABLE and report["first_wrong_step_read"] is False and report["checkpoints"] == {}
    assert (report["steps"], report["checkpoint_count"]) == (3, 2)


def test_samples_take_the_first_readable_report():
    kind, spec = get_kind("rubric"), JudgeSpec(kind="rubric", step_report=True, samples=3)
    replies = iter(["Overall Score: 6", 'Overall Score: 8\n{"first_wrong_step": null, "checkpoints_reached": [true, true]}',
                    'Overall Score: 7\n{"first_wrong_step": 1, "checkpoints_reached": [false, false]}'])
    outcome = kind.evaluate(spec, _input(), lambda messages: _Completion(next(replies)))
    assert outcome.score == 7 and outcome.step_verdicts["step_report"]["checkpoints"] == {"1": True, "2": True}
    assert outcome.samples[0]["step_report"]["status"] == UNPARSEABLE


def test_the_scripted_model_answers_it_consistently_with_its_score():
    kind, spec = get_kind("rubric"), JudgeSpec(kind="rubric", step_report=True)
    messages = kind.messages(spec, _input())
    assert scripted.prompt_kind(messages) == scripted.RUBRIC
    outcome = kind.evaluate(spec, _input(), lambda m: _Completion(scripted.answer(m)))
    report = outcome.step_verdicts["step_report"]
    assert report["status"] == OK
    assert report["checkpoints"] == {"1": outcome.score >= 5, "2": outcome.score >= 10}
    assert (report["first_wrong_step"] is None) == (outcome.score >= 10)
    assert "step_report" not in scripted.answer(kind.messages(JudgeSpec(kind="rubric"), _input()))


# --- runs and the setting form ---------------------------------------------------------------

@pytest.mark.django_db
def test_a_run_stores_the_report_and_only_asking_settings_ask(endpoint, llm_server, django_capture_on_commit_callbacks):
    question = make_question("Steps", location="S-09")
    make_checkpoints(question)
    response = make_responses(question, 1)[0]
    response.transcript = " ".join(STEPS)
    response.save(update_fields=["transcript"])
    llm_server.default = Reply('Overall Score: 5\n{"step_report": {"first_wrong_step": 2, "checkpoints_reached": '
                               '{"1": true, "2": false}}}')
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint, name="steps", step_report=True))
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint, name="plain"))
    asked = [r.text for r in llm_server.requests if "step_report" in r.text]
    assert len(asked) == 1 and "[3] So c = 3." in asked[0] and "C1 (sub-question (1), 5 points)" in asked[0]
    stored = {r.setting.name: r for r in JudgeResult.objects.select_related("setting")}
    report = stored["steps"].step_verdicts["step_report"]
    assert stored["steps"].score == 5 and report["first_wrong_step"] == 2 and report["checkpoints"] == {"1": True, "2": False}
    assert stored["plain"].step_verdicts == {}


@pytest.mark.django_db
@pytest.mark.parametrize("language,words", [("en", "Ask for the first wrong step and each checkpoint reached"),
                                            ("zh-hans", "要求给出第一个错误步骤和每个得分点是否达到")])
def test_the_setting_form_offers_it(admin_client_, endpoint, language, words):
    admin_client_.cookies["django_language"] = language
    page = admin_client_.get(reverse("grading:judge_setting_create"), HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert 'name="step_report"' in page and words in page
    admin_client_.post(reverse("grading:judge_setting_create"), form_data(endpoint, step_report="on"))
    setting = JudgeSetting.objects.get(name="rubric-a")
    assert setting.step_report is True
    detail = admin_client_.get(reverse("grading:judge_setting_detail", args=[setting.pk])).content.decode()
    assert 'id="config-step-report"' in detail
    page = admin_client_.post(reverse("grading:judge_setting_create"),
                              form_data(endpoint, name="holistic", kind="ineq_holistic", step_report="on"))
    assert not JudgeSetting.objects.filter(name="holistic").exists() and 'name="step_report"' in page.content.decode()
