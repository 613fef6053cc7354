"""POST /api/<runs>/<id>/resume/ (grading/runs/api.py, RunActionsMixin) with a body that is not a
JSON object: a 400 on every kind of run (issue 40, item 9: `request.data.get` on a list was a 500)."""
import json
import types

import pytest
from django.test import Client

from grading.models import GenerationRun, JudgeRun, LlmEndpoint, MetaEvalRun
from studies.geometry.models import GeometryRun
from studies.models import ProbeRun

from ..factories import make_stored_setting

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs():
    endpoint = LlmEndpoint.objects.create(name="local", base_url="http://127.0.0.1:9/v1", api_key_env="OPENAI_API_KEY")
    setting = make_stored_setting()
    done = {"status": "done"}
    return types.SimpleNamespace(items=[
        ("judge-runs", JudgeRun.objects.create(setting=setting, **done)),
        ("generation-runs", GenerationRun.objects.create(endpoint=endpoint, model_names=["m"], temperatures=[0], **done)),
        ("review/meta-eval-runs", MetaEvalRun.objects.create(endpoint=endpoint, model="m", prompt_version="v1", **done)),
        ("geometry-runs", GeometryRun.objects.create(**done)),
        ("probe-runs", ProbeRun.objects.create(setting=setting, probes=["drop-final-answer"], **done)),
    ])


@pytest.fixture
def api(reviewer):
    client = Client()
    client.force_login(reviewer)
    return client


@pytest.mark.parametrize("body", ["[]", '"x"', "null", "1", "true", '[{"force": true}]', '{"force": [1]}',
                                  '{"force": "maybe"}', '{"force": {"a": 1}}'])
def test_a_resume_body_that_is_not_an_object_of_true_or_false_is_a_400(api, runs, body):
    for prefix, run in runs.items:
        answer = api.post(f"/api/{prefix}/{run.pk}/resume/", body, content_type="application/json")
        assert answer.status_code == 400, (prefix, body, answer.status_code, answer.content[:200])
        assert "detail" in answer.json() or "force" in answer.json()


@pytest.mark.parametrize("body", [None, "{}", '{"force": false}'])
def test_an_empty_body_or_an_object_still_asks_whether_the_run_may_resume(api, runs, body):
    for prefix, run in runs.items:
        if body is None:
            answer = api.post(f"/api/{prefix}/{run.pk}/resume/")
        else:
            answer = api.post(f"/api/{prefix}/{run.pk}/resume/", body, content_type="application/json")
        assert answer.status_code in (200, 409), (prefix, body, answer.status_code, answer.content[:200])


def test_a_missing_run_is_still_a_404_whatever_the_body(api, runs):
    for prefix, _ in runs.items:
        assert api.post(f"/api/{prefix}/999999/resume/", json.dumps([]), content_type="application/json").status_code == 404
