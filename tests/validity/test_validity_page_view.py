"""The Validity page (`validity.views.validity_page`): reviewers only, the four answers on scripted
judges of known behaviour, its JSON reproducible, bad parameters a clear error, English and Chinese."""
import json

import pytest
from django.urls import reverse

from .conftest import scripted

pytestmark = pytest.mark.django_db
URL = reverse("validity:page")


def test_annotators_cannot_open_it(annotator_client, validity_data):
    assert annotator_client.get(URL).status_code == 403


def test_a_judge_close_to_the_experts_passes_and_the_page_says_so(reviewer_client, validity_data):
    page = reviewer_client.get(URL, {"setting": validity_data.pk}).content.decode()
    assert 'id="aat-verdict"' in page and "Yes, here: it passes" in page
    assert 'id="agreement-table"' in page and "Quadratic-weighted κ" in page


def test_a_judge_biased_by_two_points_fails(reviewer_client, db):
    setting = scripted(bias=2.0, name="biased")
    data = reviewer_client.get(URL, {"setting": setting.pk, "format": "json"}).json()
    assert data["alt_test"]["runnable"] and not data["alt_test"]["passes"]
    assert data["alt_test"]["winning_rate"] < 0.5


def test_the_json_holds_selection_parameters_and_seed_and_is_reproducible(reviewer_client, validity_data):
    query = {"setting": validity_data.pk, "budget": 20, "seed": 7, "format": "json", "alpha": 0.2}
    first = reviewer_client.get(URL, query).json()
    again = reviewer_client.get(URL, query).json()
    assert first == again
    assert first["parameters"]["seed"] == 7 and first["parameters"]["budget"] == 20
    assert first["selection"]["setting_id"] == validity_data.pk
    est = first["estimates"]
    assert est["golds"] == 20 and est["truth"]["golds"] == 72
    ppi = est["figures"]["mean_share"]["ppi"]
    assert ppi["low"] <= est["truth"]["mean_share"] <= ppi["high"]  # a good judge, 6 questions: it covers
    other = reviewer_client.get(URL, {**query, "seed": 8}).json()
    assert other["estimates"]["figures"] != est["figures"]  # another seed, another draw


def test_every_answer_with_a_gold_is_said_not_estimated(reviewer_client, validity_data):
    data = reviewer_client.get(URL, {"setting": validity_data.pk, "format": "json"}).json()
    assert data["estimates"]["reason"] == "no_unlabelled"
    page = reviewer_client.get(URL, {"setting": validity_data.pk}).content.decode()
    assert 'id="ppi-reason"' in page


def test_deferral_is_checked_on_held_out_answers(reviewer_client, validity_data):
    data = reviewer_client.get(URL, {"setting": validity_data.pk, "format": "json", "alpha": 0.2}).json()
    dfr = data["deferral"]
    assert dfr["signal"] == "spread" and dfr["calibration"] + dfr["held_out"] == 72
    assert dfr["threshold"] is not None and dfr["held_out_error_share"] <= 0.2


@pytest.mark.parametrize("params,field", [
    ({"epsilon": "2"}, "epsilon"), ({"alpha": "nan"}, "alpha"), ({"budget": "1"}, "budget"),
    ({"seed": "-1"}, "seed"), ({"question": "x"}, "question"),
])
def test_bad_parameters_are_a_form_error_not_a_500(reviewer_client, validity_data, params, field):
    response = reviewer_client.get(URL, {"setting": validity_data.pk, **params})
    assert response.status_code == 200
    assert response.context["form"].errors.get(field) and response.context["report"] is None


def test_unknown_setting_or_exam_is_a_form_error(reviewer_client, validity_data):
    response = reviewer_client.get(URL, {"setting": "no-such", "exam": "nope"})
    assert set(response.context["form"].errors) == {"setting", "exam"} and response.context["report"] is None


def test_json_is_valid_json_without_nan(reviewer_client, db):
    setting = scripted(questions=2, per_question=3, experts=1, name="tiny")
    body = reviewer_client.get(URL, {"setting": setting.pk, "format": "json"}).content.decode()
    json.loads(body, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))


def test_chinese_page(reviewer_client, validity_data):
    reviewer_client.cookies["django_language"] = "zh-hans"
    page = reviewer_client.get(URL, {"setting": validity_data.pk}, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "这个评判模型能在这里替代专家吗" in page


def test_the_methods_report_has_a_validity_section_and_links_here(reviewer_client, validity_data):
    page = reviewer_client.get(reverse("grading:methods_report"), {"setting": validity_data.pk}).content.decode()
    assert 'id="report-validity"' in page and "Alternative Annotator Test" in page
    data = reviewer_client.get(reverse("grading:methods_report"), {"setting": validity_data.pk, "download": "json"})
    validity = __import__("json").loads(data.content)["validity"]
    assert validity["settings"][0]["alt_test"]["passes"] is True
    detail = reviewer_client.get(reverse("grading:judge_setting_detail", args=[validity_data.pk])).content.decode()
    assert 'id="setting-validity"' in detail


def test_first_wrong_step_of_a_step_judge_against_the_experts_step_labels(reviewer_client, annotator):
    """A hand-made case: three answers of three steps each. The experts mark step 2 wrong on the first,
    step 3 on the second, nothing on the third; the judge flags step 2, step 2 and passes the third."""
    from annotation.models import Label, StepLabel

    from ..factories import make_question, make_responses, make_results, make_stored_setting

    question = make_question("Prove it.", exam_name="Steps exam", full_score=1)
    responses = make_responses(question, 3)
    texts = ["First we set a = 1. Then b = 3 wrongly. So c = 4.", "First we set a = 1. Then b = 2. So c = 9 wrongly.",
             "First we set a = 1. Then b = 2. So c = 3."]
    setting = make_stored_setting(name="step-judge")
    flagged = [("Then b = 3 wrongly.", False), ("Then b = 2.", False), ("", True)]
    for response, text in zip(responses, texts):
        response.transcript = text
        response.save(update_fields=["transcript"])
    make_results(setting, responses, [0, 0, 1])
    for result, (step, verdict) in zip(setting.results.order_by("response_id"), flagged):
        result.step_verdicts = {"logical_gap": verdict, "flagged_step": step}
        result.save(update_fields=["step_verdicts"])
    for response, wrong in zip(responses, ["Then b = 3 wrongly.", "So c = 9 wrongly.", None]):
        label = Label.objects.create(response=response, annotator=annotator, submitted=True, total=0, sub_scores={})
        for sentence in ("First we set a = 1.", response.transcript.split(". ")[1] + ".", response.transcript.split(". ")[2]):
            start = response.transcript.index(sentence.rstrip("."))
            StepLabel.objects.create(label=label, start=start, end=start + len(sentence), quote=sentence,
                                     verdict="logical_gap" if wrong and sentence.startswith(wrong[:8]) else "correct")
    data = reviewer_client.get(URL, {"setting": setting.pk, "format": "json"}).json()
    steps = data["steps"]
    assert (steps["erroneous"], steps["correct"], steps["not_located"]) == (2, 1, 0)
    assert steps["accuracy_erroneous"] == 0.5 and steps["within_one"] == 1.0 and steps["accuracy_correct"] == 1.0
    page = reviewer_client.get(URL, {"setting": setting.pk}).content.decode()
    assert 'id="steps"' in page


JUDGE_CP1 = [True, True, False, True, False, True, True, False]
EXPERT_CP1 = ["reached", "partly", "not_reached", "reached", "not_reached", "reached", "reached", "reached"]
SOURCES = ["human"] * 5 + ["synthetic"] * 3


def _rubric_step_case(annotator):
    """Eight answers of three steps to a question with two checkpoints, judged by a rubric setting asking
    for its step report; one expert marks checkpoints (C2 never reached by anyone: κ undefined) and the
    steps of the first four answers; a second expert ties on C1 of the last answer."""
    from annotation.models import Label, StepLabel
    from annotation.steps import split_steps

    from ..conftest import make_user
    from ..factories import make_checkpoints, make_question, make_responses, make_results, make_stored_setting

    question = make_question("Prove it.", exam_name="Rubric steps exam", full_score=10)
    c1, c2 = make_checkpoints(question)
    responses = make_responses(question, 5) + make_responses(question, 3, source="synthetic", start=5)
    text = "First we set a = 1. Then b = 2. So c = 3."
    assert len(split_steps(text)) == 3
    for response in responses:
        response.transcript = text
        response.save(update_fields=["transcript"])
    setting = make_stored_setting(name="rubric-steps", kind="rubric", step_report=True)
    make_results(setting, responses, [5] * 8)
    firsts = [(2, True), (2, True), (None, True), (1, False)] + [(None, True)] * 4  # (judge's step, readable)
    for result, reached, (first, read) in zip(setting.results.order_by("response_id"), JUDGE_CP1, firsts):
        result.step_verdicts = {"step_report": {
            "status": "ok" if read else "partial", "first_wrong_step": first, "first_wrong_step_read": read,
            "checkpoints": {"1": reached, "2": False}, "steps": 3, "checkpoint_count": 2, "notes": []}}
        result.save(update_fields=["step_verdicts"])
    wrong_step = ["Then b = 2.", "So c = 3.", None, "First we set a = 1."]  # the experts' first wrong step
    for index, (response, mark) in enumerate(zip(responses, EXPERT_CP1)):
        label = Label.objects.create(response=response, annotator=annotator, submitted=True, total=5, sub_scores={},
                                     checkpoint_marks={str(c1.pk): mark, str(c2.pk): "not_reached"})
        if index < 4:
            for sentence in ("First we set a = 1.", "Then b = 2.", "So c = 3."):
                start = text.index(sentence)
                StepLabel.objects.create(label=label, start=start, end=start + len(sentence), quote=sentence,
                                         verdict="calculation_error" if sentence == wrong_step[index] else "correct")
    Label.objects.create(response=responses[7], annotator=make_user("expert-b", "annotator"), submitted=True, total=5,
                         sub_scores={}, checkpoint_marks={str(c1.pk): "not_reached"})
    return setting, question


def test_rubric_step_report_against_the_experts_checkpoints_and_steps(reviewer_client, annotator):
    from sklearn.metrics import cohen_kappa_score

    setting, question = _rubric_step_case(annotator)
    data = reviewer_client.get(URL, {"setting": setting.pk, "format": "json"}).json()
    sr = data["step_report"]
    assert sr["answers"] == 8 and sr["unreadable"] == 0
    expert = [mark == "reached" for mark in EXPERT_CP1]
    table = {(row["checkpoint"], row["source"]): row for row in sr["checkpoints"]["table"]}
    # C1 over all sources: the last answer's experts tie (reached / not reached) and it is left out.
    c1 = table[(1, "all")]
    assert c1["n"] == 7 and sr["checkpoints"]["ties"] == 1 and c1["question_id"] == question.pk
    assert c1["kappa"] == pytest.approx(cohen_kappa_score(expert[:7], JUDGE_CP1[:7]))
    human = table[(1, "human")]
    assert human["n"] == 5 and human["kappa"] == pytest.approx(cohen_kappa_score(expert[:5], JUDGE_CP1[:5]))
    assert table[(1, "synthetic")]["n"] == 2
    # C2: judge and experts say "not reached" throughout: κ undefined, shown as a dash.
    assert table[(2, "all")]["kappa"] is None and table[(2, "all")]["agreement"] == 1.0
    # First wrong step: answers 1-2 wrong (judge exact, then one step early), 3 right (judge: none),
    # 4's report unreadable for the step: left out, counted.
    fw = sr["first_wrong_step"]
    assert (fw["erroneous"], fw["correct"], fw["left_out"]["unreadable"]) == (2, 1, 1)
    assert fw["accuracy_erroneous"] == 0.5 and fw["within_one"] == 1.0 and fw["accuracy_correct"] == 1.0
    assert fw["by_source"]["human"]["erroneous"] == 2 and str(question.pk) in fw["by_question"]
    assert data["steps"] is None  # not a step judge
    page = reviewer_client.get(URL, {"setting": setting.pk}).content.decode()
    assert 'id="checkpoint-kappa"' in page and 'id="step-report-first"' in page and "—" in page
    reviewer_client.cookies["django_language"] = "zh-hans"
    page = reviewer_client.get(URL, {"setting": setting.pk}, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "评分细则评判模型的步骤和得分点" in page
