"""The judges' REST API: versioned settings, runs with progress/cancel/resume, results."""
import pytest

from grading.models import JudgeRun, JudgeSetting
from tests.conftest import api_client_for
from tests.factories import make_setting

from .helpers import score_by_answer

pytestmark = pytest.mark.django_db


def test_settings_api_versions_on_change(reviewer, endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    api = api_client_for(reviewer)
    created = api.post("/api/judge-configs/", {"name": "api-judge", "kind": "rubric", "endpoint": endpoint.pk,
                                               "model": "m", "temperature": 0.5}, format="json")
    assert created.status_code == 201, created.json()
    pk = created.json()["id"]
    assert api.patch(f"/api/judge-configs/{pk}/", {"temperature": 0.1}, format="json").status_code == 200
    assert JudgeSetting.objects.get(pk=pk).temperature == 0.1

    llm_server.default = score_by_answer({})
    with django_capture_on_commit_callbacks(execute=True):
        run = api.post("/api/judge-runs/", {"config": pk, "filters": {"q": "Answer 1"}}, format="json")
    assert run.status_code == 201 and run.json()["n_items"] == 1
    changed = api.patch(f"/api/judge-configs/{pk}/", {"temperature": 0.9}, format="json")
    assert changed.status_code == 201 and changed.json()["version"] == 2 and changed.json()["previous"] == pk
    assert JudgeSetting.objects.get(pk=pk).temperature == 0.1
    bad = api.post("/api/judge-configs/", {"name": "x", "kind": "rubric", "prompt_template": "{{ nope }}"}, format="json")
    assert bad.status_code == 400 and "nope" in str(bad.json())
    bad = api.post("/api/judge-configs/", {"name": "y", "kind": "rubric"}, format="json")
    assert bad.status_code == 400 and "endpoint" in bad.json()


def test_runs_api_progress_cancel_resume_results(reviewer, endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    api = api_client_for(reviewer)
    llm_server.default = score_by_answer({2: 8})
    setting = make_setting(endpoint)
    with django_capture_on_commit_callbacks(execute=False):
        created = api.post("/api/judge-runs/", {"config": setting.pk, "response_ids": [r.pk for r in responses[:3]]}, format="json")
    run_id = created.json()["id"]
    assert api.get(f"/api/judge-runs/{run_id}/progress/").json()["pending"] == 3
    assert api.post(f"/api/judge-runs/{run_id}/cancel/").json()["status"] == "cancelled"
    with django_capture_on_commit_callbacks(execute=True):
        resumed = api.post(f"/api/judge-runs/{run_id}/resume/").json()
    assert resumed["epoch"] == 2
    assert JudgeRun.objects.get(pk=run_id).status == "done"
    results = api.get("/api/judge-results/", {"run": run_id}).json()["results"]
    assert len(results) == 3 and {r["config_version"] for r in results} == {1}
    assert sorted(r["score"] for r in results) == [5, 5, 8]
    assert all(r["cache_key"] and r["prompt_tokens"] > 0 for r in results)
    empty = api.post("/api/judge-runs/", {"config": setting.pk, "filters": {"q": "nothing like this"}}, format="json")
    assert empty.status_code == 400


def test_generation_api(reviewer, endpoint, llm_server, rubric_question, django_capture_on_commit_callbacks):
    api = api_client_for(reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        created = api.post("/api/generation-runs/", {"endpoint": endpoint.pk, "model_names": ["g-7b"], "temperatures": [0, 1],
                                                      "per_cell": 1, "questions": [rubric_question.pk]}, format="json")
    assert created.status_code == 201, created.json()
    progress = api.get(f"/api/generation-runs/{created.json()['id']}/progress/").json()
    assert (progress["ok"], progress["status"]) == (2, "done")


def test_ids_no_column_can_hold_are_refused_not_crashing(reviewer, reviewer_client, endpoint, responses):
    api = api_client_for(reviewer)
    huge = "9" * 30
    assert api.get("/api/judge-results/", {"response": huge}).status_code == 400
    assert api.get(f"/api/judge-runs/{huge}/").status_code == 404
    assert api.get("/api/judge-runs/abc/").status_code == 404
    assert api.post("/api/judge-runs/", {"config": int(huge)}, format="json").status_code == 400
    assert api.post("/api/judge-runs/", {"config": True}, format="json").status_code == 400
    setting = make_setting(endpoint)
    refused = api.post("/api/judge-runs/", {"config": setting.pk, "filters": {"question": huge}}, format="json")
    assert refused.status_code == 400 and "No response matches" in str(refused.json())
    assert api.post("/api/judge-runs/", {"config": setting.pk, "response_ids": [int(huge)]}, format="json").status_code == 400
    assert api.post("/api/generation-runs/", {"endpoint": endpoint.pk, "model_names": ["m"], "temperatures": [0],
                                              "questions": [int(huge)]}, format="json").status_code == 400
    assert reviewer_client.get(f"/grading/judges/runs/{huge}/").status_code == 404
    assert reviewer_client.get("/grading/judges/settings/new/", {"copy": "abc"}).status_code == 200
    assert reviewer_client.get("/grading/judges/runs/", {"config": huge}).status_code == 200
    assert reviewer_client.get("/grading/judges/runs/new/", {"question": huge}).status_code == 200


def test_judge_settings_have_one_name_and_the_old_route_still_answers(reviewer):
    """judge-settings/ is the route in the schema; judge-configs/ (its name before) answers alike."""
    api = api_client_for(reviewer)
    new = api.get("/api/judge-settings/").json()
    old = api.get("/api/judge-configs/").json()
    assert new == old
    schema = api.get("/api/schema/").content.decode()
    assert "/api/judge-settings/" in schema and "/api/judge-configs/" not in schema


def test_results_and_runs_filter_by_setting_as_by_config(reviewer, responses):
    """Issue 28: ?setting= was ignored silently (every result came back); it is `config` by its interface name."""
    from grading.models import JudgeResult
    from tests.factories import make_results, make_stored_setting

    first, second = make_stored_setting("filter-a"), make_stored_setting("filter-b")
    make_results(first, responses[:2], [1, 2], key_prefix="a")
    make_results(second, responses[:3], [3, 4, 5], key_prefix="b")
    api = api_client_for(reviewer)

    def ids(query):
        answer = api.get(f"/api/judge-results/?{query}")
        assert answer.status_code == 200, answer.content
        body = answer.json()
        return {row["id"] for row in (body["results"] if isinstance(body, dict) else body)}

    mine = set(JudgeResult.objects.filter(setting=second).values_list("pk", flat=True))
    assert ids(f"setting={second.pk}") == ids(f"config={second.pk}") == mine
    assert ids(f"setting={first.pk}") and ids(f"setting={first.pk}").isdisjoint(mine)
    assert api.get("/api/judge-results/?setting=²").status_code == 400
    assert api.get("/api/judge-runs/?setting=99999").status_code == 200


@pytest.mark.parametrize("path", ["/api/judge-results/", "/api/judge-runs/", "/api/judge-settings/", "/api/responses/"])
def test_an_unknown_filter_is_a_400_that_names_it_and_the_known_ones(reviewer, responses, path):
    """Issue 28: an unknown query parameter was ignored silently (`?settings=10`, a typo, returned
    every row). Known filters and the page number still pass."""
    api = api_client_for(reviewer)
    answer = api.get(f"{path}?settingz=10")
    assert answer.status_code == 400, answer.content
    message = answer.json()["settingz"][0]
    assert message.startswith("Unknown parameter.") and "page" in message
    assert api.get(f"{path}?page=1").status_code == 200
    known = {"/api/judge-results/": "setting=1", "/api/judge-runs/": "config=1", "/api/judge-settings/": "kind=external",
             "/api/responses/": "source=human"}[path]
    assert api.get(f"{path}?{known}&page=1").status_code == 200
