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
