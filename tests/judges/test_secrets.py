"""Secrets cannot leave: only admins say which key variable is sent where, only allowed variables
are ever read (at save time and again at call time), calls go only to allowed hosts, and model
output is capped before it is stored."""
import json

import pytest
from django.urls import reverse

from grading.generation import services as generation
from grading.judges import result_import, services
from grading.models import GenerationItem, JudgeResult, JudgeRun, JudgeSetting, LlmEndpoint
from llm import access
from tests.conftest import api_client_for
from tests.factories import API_KEY_ENV, make_endpoint, make_setting
from tests.llm_server import Reply

from .helpers import run_now

pytestmark = pytest.mark.django_db

SECRET = "django-secret-never-to-leave"


def endpoint_data(server, **overrides):
    data = {"name": "local", "base_url": server.url, "api_key_env": "", "max_concurrency": 4,
            "requests_per_minute": 0, "tokens_per_minute": 0, "timeout_seconds": 5, "max_attempts": 2}
    data.update(overrides)
    return data


def authorizations(server):
    return [r.headers.get("authorization", "") for r in server.requests]


# --- who may set endpoints ----------------------------------------------------------------

def test_reviewers_read_endpoints_only_admins_create_and_change_them(reviewer, admin_user, llm_server, endpoint):
    reviewer_api, admin_api = api_client_for(reviewer), api_client_for(admin_user)
    assert reviewer_api.get("/api/judge-endpoints/").status_code == 200
    aimed = endpoint_data(llm_server, api_key_env="HOME")
    assert reviewer_api.post("/api/judge-endpoints/", aimed, format="json").status_code == 403
    assert reviewer_api.patch(f"/api/judge-endpoints/{endpoint.pk}/", {"base_url": "http://10.0.0.1:6379/v1"},
                              format="json").status_code == 403
    assert reviewer_api.put(f"/api/judge-endpoints/{endpoint.pk}/", endpoint_data(llm_server), format="json").status_code == 403
    assert LlmEndpoint.objects.get(pk=endpoint.pk).base_url == llm_server.url
    created = admin_api.post("/api/judge-endpoints/", endpoint_data(llm_server), format="json")
    assert created.status_code == 201, created.json()
    assert admin_api.patch(f"/api/judge-endpoints/{created.json()['id']}/", {"max_concurrency": 2},
                           format="json").json()["max_concurrency"] == 2


# --- the key variable: allow-list at save time ---------------------------------------------

@pytest.mark.parametrize("name", ["HOME", "DJANGO_SECRET_KEY", "DATABASE_URL", "PATH"])
def test_a_key_variable_off_the_allow_list_is_refused_at_save(admin_user, admin_client_, llm_server, name):
    page = admin_client_.post(reverse("grading:judge_endpoint_create"), endpoint_data(llm_server, api_key_env=name))
    assert page.status_code == 200 and f"{name} is not an allowed API key variable" in page.content.decode()
    api = api_client_for(admin_user)
    refused = api.post("/api/judge-endpoints/", endpoint_data(llm_server, api_key_env=name), format="json")
    assert refused.status_code == 400 and "not an allowed API key variable" in str(refused.json()["api_key_env"])
    assert not LlmEndpoint.objects.exists()
    endpoint = make_endpoint(llm_server)
    changed = api.patch(f"/api/judge-endpoints/{endpoint.pk}/", {"api_key_env": name}, format="json")
    assert changed.status_code == 400
    assert LlmEndpoint.objects.get(pk=endpoint.pk).api_key_env == API_KEY_ENV


def test_the_allow_list_is_a_setting_but_the_apps_own_secrets_stay_out(settings, admin_user, llm_server, monkeypatch):
    api = api_client_for(admin_user)
    settings.LLM_KEY_ENV_ALLOWED = ["LAB_KEY", "VENDOR_*"]
    monkeypatch.setenv("LAB_KEY", "k")
    assert api.post("/api/judge-endpoints/", endpoint_data(llm_server, name="a", api_key_env="LAB_KEY"), format="json").status_code == 201
    assert api.post("/api/judge-endpoints/", endpoint_data(llm_server, name="b", api_key_env="VENDOR_X"), format="json").status_code == 201
    assert api.post("/api/judge-endpoints/", endpoint_data(llm_server, name="c", api_key_env="OPENAI_API_KEY"), format="json").status_code == 400
    settings.LLM_KEY_ENV_ALLOWED = ["*"]
    assert access.key_name_problem("ANYTHING") == ""
    assert "not an allowed" in access.key_name_problem("DJANGO_SECRET_KEY")
    assert "not a key" in access.key_name_problem("sk-live-123")


def test_an_allowed_but_unset_variable_saves_with_a_clear_warning(admin_user, admin_client_, llm_server, monkeypatch):
    monkeypatch.delenv("REALMATH_LLM_KEY_LATER", raising=False)
    form_page = admin_client_.get(reverse("grading:judge_endpoint_create"))
    assert form_page.context["form"]["api_key_env"].value() == ""  # nothing prefilled
    assert "REALMATH_LLM_KEY_*" in form_page.content.decode()  # the form says what is allowed
    saved = admin_client_.post(reverse("grading:judge_endpoint_create"),
                               endpoint_data(llm_server, api_key_env="REALMATH_LLM_KEY_LATER"), follow=True)
    page = saved.content.decode()
    assert LlmEndpoint.objects.get(name="local").api_key_env == "REALMATH_LLM_KEY_LATER"
    assert "msg-warning" in page and "REALMATH_LLM_KEY_LATER is not set" in page
    endpoint = LlmEndpoint.objects.get(name="local")
    edit = admin_client_.get(reverse("grading:judge_endpoint_edit", args=[endpoint.pk])).content.decode()
    assert 'id="endpoint-warnings"' in edit and "REALMATH_LLM_KEY_LATER is not set" in edit

    api = api_client_for(admin_user)
    answer = api.post("/api/judge-endpoints/", endpoint_data(llm_server, name="api", api_key_env="REALMATH_LLM_KEY_LATER"),
                      format="json")
    assert answer.status_code == 201 and "REALMATH_LLM_KEY_LATER is not set" in " ".join(answer.json()["warnings"])
    monkeypatch.setenv("REALMATH_LLM_KEY_LATER", "sk-now-set")
    assert api.get(f"/api/judge-endpoints/{answer.json()['id']}/").json()["warnings"] == []
    assert "sk-now-set" not in json.dumps(api.get("/api/judge-endpoints/").json())
    blank = api.post("/api/judge-endpoints/", endpoint_data(llm_server, name="keyless"), format="json").json()
    assert blank["api_key_env"] == "" and blank["warnings"] == []


# --- the key variable: never read at run time ------------------------------------------------

@pytest.mark.parametrize("name", ["HOME", "DJANGO_SECRET_KEY"])
def test_a_key_variable_that_reached_the_database_is_never_read(name, llm_server, responses, monkeypatch,
                                                               django_capture_on_commit_callbacks):
    monkeypatch.setenv(name, SECRET)
    # As an import or an older version would leave it: the row never passed the allow-list.
    smuggled = LlmEndpoint.objects.create(name="smuggled", base_url=llm_server.url, api_key_env=name)
    setting = make_setting(smuggled)
    with pytest.raises(services.RunRefused, match="not an allowed API key variable"):
        services.start_judge_run(setting)
    with pytest.raises(services.RunRefused, match="not an allowed API key variable"):
        generation.start_generation_run(endpoint=smuggled, models=["m"], temperatures=[0], questions=None,
                                      params={"question": str(responses[0].question_id)})

    # A run queued while the endpoint was fine; the row changes before a worker calls.
    endpoint = make_endpoint(llm_server)
    run = services.start_judge_run(make_setting(endpoint), enqueue=False)
    LlmEndpoint.objects.filter(pk=endpoint.pk).update(api_key_env=name)
    run = services.run_inline(run)
    results = list(JudgeResult.objects.filter(run=run))
    assert len(results) == len(responses) and {r.status for r in results} == {"error"}
    assert "not an allowed API key variable" in results[0].errors[-1]["message"]
    assert all(SECRET not in auth for auth in authorizations(llm_server)) and llm_server.request_count == 0


def test_a_secret_file_cannot_be_reached_through_the_key_name(settings, llm_server, responses, tmp_path, monkeypatch):
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path / "creds"))
    (tmp_path / "creds" / "REALMATH_LLM_KEY_").mkdir(parents=True)  # so the path would resolve
    (tmp_path / "secret").write_text(SECRET)
    settings.LLM_KEY_ENV_ALLOWED = ["REALMATH_LLM_KEY_*"]
    endpoint = LlmEndpoint.objects.create(name="dots", base_url=llm_server.url, api_key_env="REALMATH_LLM_KEY_/../../secret")
    run = services.start_judge_run(make_setting(make_endpoint(llm_server)), enqueue=False)
    JudgeSetting.objects.filter(pk=run.setting_id).update(endpoint=endpoint)
    services.run_inline(JudgeRun.objects.get(pk=run.pk))
    assert llm_server.request_count == 0
    assert "not a key" in JudgeResult.objects.filter(run=run).first().errors[-1]["message"]


# --- hosts ----------------------------------------------------------------------------------

def test_the_host_allow_list_refuses_other_hosts(settings, admin_user, admin_client_, llm_server, responses):
    settings.LLM_ALLOWED_HOSTS = ["llm.example.org", ".lab.example.org"]
    api = api_client_for(admin_user)
    refused = api.post("/api/judge-endpoints/", endpoint_data(llm_server), format="json")
    assert refused.status_code == 400 and "127.0.0.1 is not in REALMATH_LLM_ALLOWED_HOSTS" in str(refused.json()["base_url"])
    page = admin_client_.post(reverse("grading:judge_endpoint_create"), endpoint_data(llm_server)).content.decode()
    assert "127.0.0.1 is not in REALMATH_LLM_ALLOWED_HOSTS" in page and not LlmEndpoint.objects.exists()
    assert api.post("/api/judge-endpoints/", endpoint_data(llm_server, base_url="https://llm.example.org/v1"),
                    format="json").status_code == 201
    assert access.url_problem("https://gpu1.lab.example.org:8443/v1") == ""
    assert "not in" in access.url_problem("https://llm.example.org.evil.test/v1")
    assert "http:// or https://" in access.url_problem("file:///etc/passwd")

    # A row saved before the list was set (or imported) is refused when it would be called.
    endpoint = make_endpoint(llm_server)
    with pytest.raises(services.RunRefused, match="REALMATH_LLM_ALLOWED_HOSTS"):
        services.start_judge_run(make_setting(endpoint))
    settings.LLM_ALLOWED_HOSTS = []
    run = services.start_judge_run(make_setting(endpoint), enqueue=False)
    settings.LLM_ALLOWED_HOSTS = ["llm.example.org"]
    services.run_inline(run)
    assert llm_server.request_count == 0
    assert "REALMATH_LLM_ALLOWED_HOSTS" in JudgeResult.objects.filter(run=run).first().errors[-1]["message"]
    settings.LLM_ALLOWED_HOSTS = ["127.0.0.1"]
    assert api.post("/api/judge-endpoints/", endpoint_data(llm_server, name="ok"), format="json").status_code == 201


# --- imported settings ------------------------------------------------------------------------

def test_the_api_cannot_version_an_imported_setting(reviewer, responses):
    report = result_import.import_judge_results(json.dumps([{"response_id": responses[0].pk, "model_score": 4}]),
                                           "judged.json", model="elsewhere")
    setting = JudgeSetting.objects.get(kind=JudgeSetting.Kind.EXTERNAL)
    assert report.created == 1 and services.setting_is_used(setting)
    api = api_client_for(reviewer)
    for change in ({"temperature": 0.5}, {"model": "other"}, {"notes": "x"}):
        refused = api.patch(f"/api/judge-configs/{setting.pk}/", change, format="json")
        assert refused.status_code == 400 and "Imported settings" in str(refused.json()), change
    assert JudgeSetting.objects.filter(name=setting.name).count() == 1


# --- output size ------------------------------------------------------------------------------

HUGE = 5_000_000


def test_a_huge_completion_is_stored_cut_and_flagged(reviewer, reviewer_client, llm_server, endpoint, responses,
                                                     django_capture_on_commit_callbacks):
    limit = access.max_output_chars()
    llm_server.default = Reply("Let me think. " + "x" * HUGE + "\n\nOverall Score: 7")
    run = run_now(django_capture_on_commit_callbacks, make_setting(endpoint), response_ids=[responses[0].pk])
    result = JudgeResult.objects.get(run=run)
    assert result.output_truncated and result.score == 7  # the tail, with the score, is kept
    assert len(result.raw_output) < limit + 200 and len(result.rationale) < limit + 200
    assert all(len(s["raw"]) < limit + 200 for s in result.samples)
    note = next(e for e in result.errors if e["kind"] == "truncated")
    assert note["chars"] > HUGE and "REALMATH_LLM_MAX_OUTPUT_CHARS" in note["message"]

    page = api_client_for(reviewer).get("/api/judge-results/")
    assert page.status_code == 200 and len(page.content) < 4 * limit
    assert page.json()["results"][0]["output_truncated"] is True
    detail = reviewer_client.get(reverse("grading:judge_result_detail", args=[result.pk])).content.decode()
    assert 'id="output-truncated"' in detail


def test_the_output_cap_is_a_setting_and_covers_synthetic_answers(settings, llm_server, endpoint, rubric_question,
                                                                  django_capture_on_commit_callbacks):
    settings.LLM_MAX_OUTPUT_CHARS = 1000
    llm_server.default = Reply("y" * 50_000 + " The answer is $x = 2$.")
    with django_capture_on_commit_callbacks(execute=True):
        generation.start_generation_run(endpoint=endpoint, models=["g"], temperatures=[0], questions=None,
                                      params={"question": str(rubric_question.pk)})
    item = GenerationItem.objects.get()
    assert item.state == "ok" and len(item.response.transcript) < 1200
    assert item.response.transcript.endswith("The answer is $x = 2$.")
    assert any(e["kind"] == "truncated" and e["chars"] > 50_000 for e in item.errors)
    assert access.cap_output("short") == ("short", 0)


def test_the_django_admin_applies_the_same_allow_list(admin_client_, llm_server):
    url = reverse("admin:grading_llmendpoint_add")
    page = admin_client_.post(url, endpoint_data(llm_server, api_key_env="DJANGO_SECRET_KEY"))
    assert page.status_code == 200 and "not an allowed API key variable" in page.content.decode()
    assert not LlmEndpoint.objects.exists()
    assert admin_client_.post(url, endpoint_data(llm_server, api_key_env=API_KEY_ENV)).status_code == 302
