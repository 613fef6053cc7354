"""Judge settings and endpoints pages: create, edit in place while unused, new version once used."""
import pytest
from django.urls import reverse

from grading.judges import prompts
from grading.models import JudgeSetting, LlmEndpoint
from tests.factories import API_KEY_ENV, make_setting

from .helpers import run_now, score_by_answer

pytestmark = pytest.mark.django_db


def form_data(ep, **overrides):
    data = {
        "name": "rubric-a", "kind": "rubric", "endpoint": ep.pk, "model": "judge-x", "temperature": "0.7",
        "max_tokens": "4096", "reasoning_effort": "", "samples": "1", "aggregate": "mean", "parse_retries": "1",
        "price_input_per_1k": "0.001", "price_output_per_1k": "0.002", "system_prompt": "", "prompt_template": "",
        "extra_body": "", "notes": "",
    }
    data.update(overrides)
    return data


def test_create_edit_in_place_then_new_version(admin_client_, endpoint, llm_server, responses,
                                                django_capture_on_commit_callbacks):
    response = admin_client_.post(reverse("grading:judge_setting_create"), form_data(endpoint))
    config = JudgeSetting.objects.get(name="rubric-a")
    assert response.status_code == 302 and config.version == 1 and config.created_by is not None

    edit_url = reverse("grading:judge_setting_edit", args=[config.pk])
    admin_client_.post(edit_url, form_data(endpoint, temperature="0.2", name="ignored"))
    config.refresh_from_db()
    assert config.temperature == 0.2 and config.name == "rubric-a" and JudgeSetting.objects.count() == 1

    llm_server.default = score_by_answer({})
    run_now(django_capture_on_commit_callbacks, config)
    page = admin_client_.get(edit_url)
    assert "saving creates version 2" in page.content.decode()
    response = admin_client_.post(edit_url, form_data(endpoint, temperature="0.9", extra_body='{"top_p": 0.5}'))
    newer = JudgeSetting.objects.get(name="rubric-a", version=2)
    assert response["Location"] == reverse("grading:judge_setting_detail", args=[newer.pk])
    assert (newer.temperature, newer.extra_body, newer.previous_id) == (0.9, {"top_p": 0.5}, config.pk)
    config.refresh_from_db()
    assert config.temperature == 0.2 and config.extra_body == {}
    home = admin_client_.get(reverse("grading:judges_home"))
    assert [c.version for c in home.context["configs"]] == [2]
    detail = admin_client_.get(reverse("grading:judge_setting_detail", args=[config.pk])).content.decode()
    assert "A newer version exists" in detail and "Overall Score: X" in detail  # the default template


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
    config = make_setting(endpoint, name="orig", prompt_template="Grade {{ response }}")
    page = admin_client_.get(reverse("grading:judge_setting_create"), {"copy": config.pk})
    assert page.context["form"].initial["prompt_template"] == "Grade {{ response }}"
    assert page.context["form"].initial["name"] == "orig copy"


def test_endpoint_form_keeps_keys_out(admin_client_, llm_server):
    url = reverse("grading:judge_endpoint_create")
    page = admin_client_.post(url, {"name": "bad", "base_url": llm_server.url, "api_key_env": "sk-live-123",
                                    "max_concurrency": 4, "requests_per_minute": 0, "tokens_per_minute": 0,
                                    "timeout_seconds": 30, "max_attempts": 3})
    assert "not a key" in page.content.decode() and not LlmEndpoint.objects.exists()
    admin_client_.post(url, {"name": "good", "base_url": llm_server.url, "api_key_env": API_KEY_ENV,
                             "max_concurrency": 4, "requests_per_minute": 60, "tokens_per_minute": 0,
                             "timeout_seconds": 30, "max_attempts": 3})
    endpoint = LlmEndpoint.objects.get(name="good")
    assert endpoint.requests_per_minute == 60
    home = admin_client_.get(reverse("grading:judges_home")).content.decode()
    assert API_KEY_ENV in home and "sk-test-not-a-real-key" not in home


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
    config = JudgeSetting.objects.get(name="cas-a")
    assert (config.answer_tolerance, config.second_opinion) == ("default", True)
    detail = admin_client_.get(reverse("grading:judge_setting_detail", args=[config.pk])).content.decode()
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
    config = JudgeSetting.objects.get(name="cas-c")
    assert config.approximate_answers == "right"
    detail = admin_client_.get(reverse("grading:judge_setting_detail", args=[config.pk])).content.decode()
    assert 'id="config-approximate">Credited: an answer equal up to rounding' in detail
    bad = form_data(endpoint, name="cas-d", kind="cas_final_answer", endpoint="", model="", approximate_answers="half")
    response = admin_client_.post(reverse("grading:judge_setting_create"), bad)
    assert response.status_code == 200 and not JudgeSetting.objects.filter(name="cas-d").exists()
    assert "approximate_answers" in response.context["form"].errors
