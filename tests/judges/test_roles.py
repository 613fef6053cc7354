"""Every judge page and API needs a login and the reviewer role."""
import pytest
from django.urls import reverse

from tests.conftest import api_client_for
from tests.factories import make_setting

pytestmark = pytest.mark.django_db


@pytest.fixture
def objects(endpoint, responses, django_capture_on_commit_callbacks, llm_server):
    from grading.generation import services as generation
    from grading.judges import services
    from grading.models import JudgeResult

    from .helpers import score_by_answer

    llm_server.default = score_by_answer({})
    setting = make_setting(endpoint)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.start_judge_run(setting)
    gen = generation.start_generation_run(endpoint=endpoint, models=["m"], temperatures=[0], questions=None,
                                        params={"question": str(responses[0].question_id)})
    return {"config": setting, "run": run, "endpoint": endpoint, "result": JudgeResult.objects.first(), "gen": gen}


def page_urls(o):
    return [
        reverse("grading:judges_home"),
        reverse("grading:judge_setting_create"),
        reverse("grading:judge_setting_detail", args=[o["config"].pk]),
        reverse("grading:judge_setting_edit", args=[o["config"].pk]),
        reverse("grading:judge_endpoint_create"),
        reverse("grading:judge_endpoint_edit", args=[o["endpoint"].pk]),
        reverse("grading:judge_run_list"),
        reverse("grading:judge_run_start"),
        reverse("grading:judge_run_detail", args=[o["run"].pk]),
        reverse("grading:judge_run_progress", args=[o["run"].pk]),
        reverse("grading:judge_result_detail", args=[o["result"].pk]),
        reverse("grading:judge_generation_list"),
        reverse("grading:judge_generation_start"),
        reverse("grading:judge_generation_detail", args=[o["gen"].pk]),
        reverse("grading:judge_generation_progress", args=[o["gen"].pk]),
    ]


POST_URLS = ["grading:judge_run_cancel", "grading:judge_run_resume"]


def test_anonymous_is_sent_to_login(client, objects):
    for url in page_urls(objects):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url
    for name in POST_URLS:
        assert client.post(reverse(name, args=[objects["run"].pk])).status_code == 302


def test_annotator_is_refused(annotator_client, objects):
    for url in page_urls(objects):
        assert annotator_client.get(url).status_code == 403, url
    for name in POST_URLS + ["grading:judge_generation_cancel", "grading:judge_generation_resume"]:
        pk = objects["gen"].pk if "generation" in name else objects["run"].pk
        assert annotator_client.post(reverse(name, args=[pk])).status_code == 403, name


def test_reviewer_may_all_but_endpoints(reviewer_client, objects):
    admin_only = {reverse("grading:judge_endpoint_create"), reverse("grading:judge_endpoint_edit", args=[objects["endpoint"].pk])}
    for url in page_urls(objects):
        assert reviewer_client.get(url).status_code == (403 if url in admin_only else 200), url
    for url in admin_only:  # an endpoint says which key is sent where: admins only
        assert reviewer_client.post(url, {"name": "x", "base_url": "http://127.0.0.1:9/v1"}).status_code == 403, url
    home = reviewer_client.get(reverse("grading:judges_home")).content.decode()
    assert all(url not in home for url in admin_only)


def test_admin_may(admin_client_, objects):
    for url in page_urls(objects):
        assert admin_client_.get(url).status_code == 200, url


def test_api_roles(annotator, reviewer, objects):
    lists = ["/api/judge-configs/", "/api/judge-endpoints/", "/api/judge-runs/", "/api/generation-runs/"]
    annotator_api, reviewer_api = api_client_for(annotator), api_client_for(reviewer)
    for url in lists:
        assert annotator_api.get(url).status_code == 403, url
        assert reviewer_api.get(url).status_code == 200, url
    assert annotator_api.post(f"/api/judge-runs/{objects['run'].pk}/cancel/").status_code == 403
    assert annotator_api.post("/api/judge-configs/", {"name": "x", "kind": "rubric"}, format="json").status_code == 403
    assert annotator_api.get(f"/api/judge-endpoints/{objects['endpoint'].pk}/").status_code == 403
    from rest_framework.test import APIClient

    assert APIClient().get("/api/judge-results/").status_code in (401, 403)
    # Annotators may read results, but only where the blind rule allows (see test_api_judges).
    assert annotator_api.get("/api/judge-results/").status_code == 200
