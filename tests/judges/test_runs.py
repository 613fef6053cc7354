"""Judge runs end to end through the real openai client and the scripted server."""
import pytest

from grading.models import JudgeResult, JudgeRun
from tests.factories import make_setting

from .helpers import run_now, score_by_answer

pytestmark = pytest.mark.django_db


def test_run_scores_every_response(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    llm_server.default = score_by_answer({0: 3, 1: 7, 2: 10})
    setting = make_setting(endpoint)
    run = run_now(django_capture_on_commit_callbacks, setting)
    assert run.status == JudgeRun.Status.DONE
    results = {r.response.transcript.split(":")[0]: r for r in JudgeResult.objects.select_related("response")}
    assert len(results) == 6
    assert results["Answer 0"].score == 3
    assert results["Answer 1"].score == 7
    assert results["Answer 2"].score == 10
    assert all(r.status == "ok" and r.parse_status == "ok" for r in results.values())
    assert llm_server.request_count == 6
