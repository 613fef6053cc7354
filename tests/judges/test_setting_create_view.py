"""The new-setting form (grading.judges.views.setting_create, /grading/judges/settings/new/): kinds, copies, bad input, CAS options."""
import pytest
from django.urls import reverse

from grading.judges import prompts
from grading.models import JudgeSetting
from tests.factories import make_setting

from .conftest import form_data

pytestmark = pytest.mark.django_db


def test_reviewer_may_edit_settings_too(reviewer_client, endpoint):
    assert reviewer_client.post(reverse("grading:judge_setting_create"), form_data(endpoint)).status_code == 302


def test_bad_input_is_refused_with_a_reason(admin_client_, endpoint):
    page = admin_client_.post(reverse("grading:judge_setting_create"), form_data(endpoint, prompt_template="{{ problem }} {{ secret }}"))
    assert "Unknown placeholders: secret" in page.content.decode()
    page = admin_client_.post(reverse("grading:judge_setting_create"), form_data(endpoint, extra_body="[1"))
    assert "Not valid JSON" in page.content.decode()
    page = admin_client_.post(reverse("grading:judge_setting_create"), form_data(endpoint, endpoint="", model=""))
    assert "choose an endpoint" in page.content.decode()
    make_setting(endpoint, name="taken")
    page = admin_client_.post(reverse("grading:judge_setting_create"), form_data(endpoint, name="taken"))
    assert "edit it to make a new version" in page.content.decode()
    assert JudgeSetting.objects.count() == 1
    # A CAS judge needs no endpoint.
    admin_client_.post(reverse("grading:judge_setting_create"), form_data(endpoint, name="cas", kind="cas_final_answer", endpoint="", model=""))
    assert JudgeSetting.objects.filter(name="cas", endpoint__isnull=True).exists()


def test_copy_prefills_the_form(admin_client_, endpoint):
    setting = make_setting(endpoint, name="orig", prompt_template="Grade {{ response }}")
    page = admin_client_.get(reverse("grading:judge_setting_create"), {"copy": setting.pk})
    assert page.context["form"].initial["prompt_template"] == "Grade {{ response }}"
    assert page.context["form"].initial["name"] == "orig copy"


def test_form_offers_kind_defaults(admin_client_):
    page = admin_client_.get(reverse("grading:judge_setting_create"))
    assert page.context["defaults"]["rubric"]["template"] == prompts.RUBRIC_TEMPLATE
    assert page.context["defaults"]["ineq_toy_case"]["template"] == prompts.TOY_CASE_TEMPLATE
    kinds = [value for value, _ in page.context["form"].fields["kind"].choices]
    assert "external" not in kinds and "cas_final_answer" in kinds
    assert 'id="kind-defaults"' in page.content.decode()


def test_cas_setting_chooses_the_decimal_tolerance_and_a_second_opinion(admin_client_, endpoint):
    data = form_data(endpoint, name="cas-a", kind="cas_final_answer", endpoint="", model="", answer_tolerance="default",
                     second_opinion="on")
    assert admin_client_.post(reverse("grading:judge_setting_create"), data).status_code == 302
    setting = JudgeSetting.objects.get(name="cas-a")
    assert (setting.answer_tolerance, setting.second_opinion) == ("default", True)
    detail = admin_client_.get(reverse("grading:judge_setting_detail", args=[setting.pk])).content.decode()
    assert "Rounded: a decimal correctly rounded at its last place counts" in detail
    assert "Math-Verify, shown beside the CAS verdict" in detail
    admin_client_.post(reverse("grading:judge_setting_create"), form_data(endpoint, name="cas-b", kind="cas_final_answer",
                                                                          endpoint="", model=""))
    assert JudgeSetting.objects.get(name="cas-b").answer_tolerance == "strict"  # left out: the IneqMath rule
    assert JudgeSetting.objects.get(name="cas-b").approximate_answers == "wrong"  # left out: not credited


def test_cas_setting_chooses_how_approximations_score(admin_client_, endpoint):
    form = admin_client_.get(reverse("grading:judge_setting_create")).content.decode()
    assert 'name="approximate_answers"' in form
    data = form_data(endpoint, name="cas-c", kind="cas_final_answer", endpoint="", model="", answer_tolerance="default",
                     approximate_answers="right")
    assert admin_client_.post(reverse("grading:judge_setting_create"), data).status_code == 302
    setting = JudgeSetting.objects.get(name="cas-c")
    assert setting.approximate_answers == "right"
    detail = admin_client_.get(reverse("grading:judge_setting_detail", args=[setting.pk])).content.decode()
    assert 'id="config-approximate">Credited: an answer equal up to rounding' in detail
    bad = form_data(endpoint, name="cas-d", kind="cas_final_answer", endpoint="", model="", approximate_answers="half")
    response = admin_client_.post(reverse("grading:judge_setting_create"), bad)
    assert response.status_code == 200 and not JudgeSetting.objects.filter(name="cas-d").exists()
    assert "approximate_answers" in response.context["form"].errors


def test_a_new_setting_starts_at_temperature_0(admin_client_):
    """Issue 39: a grading study wants the same score for the same answer, so the form offers 0."""
    page = admin_client_.get(reverse("grading:judge_setting_create")).content.decode()
    field = page[page.index('name="temperature"') - 200:page.index('name="temperature"') + 200]
    assert 'value="0' in field and "0.7" not in field
    assert JudgeSetting._meta.get_field("temperature").default == 0


def test_few_shot_form_says_where_its_examples_come_from(admin_client_, endpoint):
    """Issue 34: the form offers the examples' source, real students' answers by default (the paper's design)."""
    from decimal import Decimal

    from annotation.models import Response, content_hash
    from tests.factories import make_question

    question = make_question("Question F: find w.", full_score=10, location="F-1")
    for i, source in enumerate(["human"] * 4 + ["synthetic"] * 4):
        text = f"{source} answer {i}"
        Response.objects.create(question=question, student_id=f"s-{i}", transcript=text, source=source,
                                transcript_hash=content_hash(text), gold_score=Decimal(i))
    form_page = admin_client_.get("/grading/judges/settings/new/").content.decode()
    assert 'name="few_shot_source"' in form_page
    assert '<option value="human" selected>Real students&#x27; answers only, for every judged answer (the paper&#x27;s ' \
           'design)</option>' in form_page
    data = {"name": "fs-same", "kind": "rubric", "strategy": "few-shot", "few_shot_k": 2, "split_rule": "student",
            "few_shot_seed": 0, "few_shot_source": "same", "endpoint": endpoint.pk, "model": "m", "samples": 1,
            "aggregate": "mean", "parse_retries": 0, "price_input_per_1k": 0, "price_output_per_1k": 0,
            "temperature": 0, "max_tokens": 64}
    page = admin_client_.post("/grading/judges/settings/new/", data, follow=True).content.decode()
    setting = JudgeSetting.objects.get(name="fs-same")
    assert setting.few_shot_source == "same" and set(setting.calibration["examples_by_source"]) == {"human", "synthetic"}
    assert "human examples for human answers, synthetic examples for synthetic answers" in page
    del data["few_shot_source"]  # an older client that does not send it gets the default
    data["name"] = "fs-default"
    admin_client_.post("/grading/judges/settings/new/", data)
    assert JudgeSetting.objects.get(name="fs-default").calibration["source"] == "human"
