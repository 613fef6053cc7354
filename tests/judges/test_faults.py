"""Every fault the scripted server can produce ends recorded on the result; none stops a run."""
import gzip
import json

import pytest

from grading.models import JudgeResult, JudgeRun, JudgeRunItem
from tests.factories import make_endpoint, make_setting
from tests.llm_server import Reply

from .helpers import resume_now, run_now, score_by_answer

pytestmark = pytest.mark.django_db


def result_for(answer_no):
    return JudgeResult.objects.get(response__transcript__startswith=f"Answer {answer_no}:")


def test_429_with_retry_after_is_honoured(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    llm_server.default = score_by_answer({})
    llm_server.script("Answer 1:", Reply(status=429, retry_after=0.4), Reply("Overall Score: 6"))
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint), response_ids=[responses[1].pk])
    result = result_for(1)
    assert (result.status, result.score, result.attempts) == ("ok", 6, 2)
    assert result.errors[0]["status"] == 429 and result.errors[0]["retry_after"] == 0.4
    first, second = sorted(r.started for r in llm_server.requests if "Answer 1:" in r.text)
    assert second - first >= 0.4


def test_5xx_then_success_and_5xx_forever(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    llm_server.default = score_by_answer({})
    llm_server.script("Answer 2:", Reply(status=500), Reply(status=503), Reply("Overall Score: 4"))
    llm_server.script("Answer 3:", *[Reply(status=500)] * 4)
    run = run_now(django_capture_on_commit_callbacks, make_setting(endpoint))
    assert run.status == JudgeRun.Status.DONE
    ok = result_for(2)
    assert (ok.status, ok.score, ok.attempts) == ("ok", 4, 3)
    assert [e["status"] for e in ok.errors] == [500, 503]
    failed = result_for(3)
    assert failed.status == "error" and failed.score is None
    assert failed.attempts == 4 and [e["status"] for e in failed.errors] == [500] * 4
    assert run.items.get(response_id=failed.response_id).state == JudgeRunItem.State.ERROR
    assert JudgeResult.objects.filter(status="ok").count() == 5

    # Resume retries only the failed item, into the same row.
    calls = llm_server.request_count
    run = resume_now(django_capture_on_commit_callbacks, run)
    assert llm_server.request_count == calls + 1
    failed.refresh_from_db()
    assert failed.status == "ok" and JudgeResult.objects.count() == 6
    assert run.status == JudgeRun.Status.DONE and not run.items.exclude(state="ok").exists()


def test_timeouts_and_unreadable_bodies_are_retried(llm_server, responses, django_capture_on_commit_callbacks):
    endpoint = make_endpoint(llm_server, timeout_seconds=0.3)
    llm_server.default = score_by_answer({})
    llm_server.script("Answer 0:", Reply(hang=10), Reply("Overall Score: 2"))
    llm_server.script("Answer 1:", Reply(body=b"<html>502 bad gateway</html>"), Reply("Overall Score: 8"))
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint), response_ids=[responses[0].pk, responses[1].pk])
    timed_out, garbled = result_for(0), result_for(1)
    assert (timed_out.status, timed_out.score, timed_out.errors[0]["kind"]) == ("ok", 2, "timeout")
    assert (garbled.status, garbled.score, garbled.errors[0]["kind"]) == ("ok", 8, "bad_response")


def test_client_errors_are_not_retried(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    llm_server.script(None, Reply(status=401))
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint), response_ids=[responses[0].pk])
    result = result_for(0)
    assert result.status == "error" and result.attempts == 1 and result.errors[0]["status"] == 401
    assert llm_server.request_count == 1


def test_garbage_and_out_of_range_scores_are_kept_raw_and_invalid(
    endpoint, llm_server, responses, django_capture_on_commit_callbacks
):
    llm_server.default = score_by_answer({})
    llm_server.script("Answer 0:", Reply("I am unable to grade this answer, sorry."))
    llm_server.script("Answer 1:", Reply("Overall Score: 15\nGenerous."))
    llm_server.script("Answer 2:", Reply("Overall Score: -1"))
    run = run_now(django_capture_on_commit_callbacks, make_setting(endpoint))
    assert run.status == JudgeRun.Status.DONE
    garbage, too_high, negative = result_for(0), result_for(1), result_for(2)
    assert (garbage.status, garbage.parse_status, garbage.score) == ("invalid", "unparseable", None)
    assert garbage.raw_output == "I am unable to grade this answer, sorry."
    assert (too_high.status, too_high.parse_status, too_high.score) == ("invalid", "out_of_range", None)
    assert too_high.samples[0]["raw_value"] == 15 and too_high.raw_output.startswith("Overall Score: 15")
    assert negative.parse_status == "out_of_range"
    assert run.items.filter(state=JudgeRunItem.State.INVALID).count() == 3
    assert run.items.filter(state=JudgeRunItem.State.OK).count() == 3


def test_unreadable_output_is_asked_again_when_configured(
    endpoint, llm_server, responses, django_capture_on_commit_callbacks
):
    llm_server.script("Answer 0:", Reply("Let me think... no score."), Reply("Overall Score: 9/10"))
    setting = make_setting(endpoint, parse_retries=1)
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[responses[0].pk])
    result = result_for(0)
    assert (result.status, result.score, result.attempts) == ("ok", 9, 2)


def test_missing_key_refuses_the_run(llm_server, responses, monkeypatch):
    from grading.judges.services import RunRefused, start_judge_run

    endpoint = make_endpoint(llm_server, api_key_env="REALMATH_LLM_KEY_NO_SUCH")
    monkeypatch.delenv("REALMATH_LLM_KEY_NO_SUCH", raising=False)
    with pytest.raises(RunRefused, match="REALMATH_LLM_KEY_NO_SUCH"):
        start_judge_run(make_setting(endpoint))
    assert not JudgeRun.objects.exists()


def test_all_faults_in_one_run(llm_server, rubric_question, django_capture_on_commit_callbacks):
    from tests.factories import make_responses

    make_responses(rubric_question, 12)
    endpoint = make_endpoint(llm_server, timeout_seconds=0.3, max_attempts=2)
    llm_server.default = score_by_answer({})
    llm_server.script("Answer 0:", Reply(status=429, retry_after=0.1), Reply(status=429, retry_after=0.1))
    llm_server.script("Answer 1:", Reply(status=500), Reply(status=500))
    llm_server.script("Answer 2:", Reply(hang=10), Reply(hang=10))
    llm_server.script("Answer 3:", Reply(body=b"{not json"), Reply(body=b""))
    llm_server.script("Answer 4:", Reply("Overall Score: 99"))
    llm_server.script("Answer 5:", Reply("¯\\_(ツ)_/¯"))
    run = run_now(django_capture_on_commit_callbacks, make_setting(endpoint))
    assert run.status == JudgeRun.Status.DONE
    assert JudgeResult.objects.count() == 12
    states = dict(run.items.values_list("response__transcript", "state"))
    by_answer = {text.split(":")[0]: state for text, state in states.items()}
    # Two 429s are the provider pacing the calls, not failures: they use up no attempt.
    assert [by_answer[f"Answer {i}"] for i in range(6)] == ["ok"] + ["error"] * 3 + ["invalid"] * 2
    assert all(by_answer[f"Answer {i}"] == "ok" for i in range(6, 12))
    paced = result_for(0)
    assert paced.attempts == 3 and [e["status"] for e in paced.errors] == [429, 429]
    for result in JudgeResult.objects.filter(status="error"):
        assert result.attempts == 2 and len(result.errors) == 2


def test_resume_retries_every_failed_item_across_chunks(endpoint, llm_server, responses,
                                                         django_capture_on_commit_callbacks):
    """A resumed run is done only when each failed item had its retry, not when the first
    chunk of retries ends (failed items are open again, as pending)."""
    llm_server.default = Reply(status=500)
    run = run_now(django_capture_on_commit_callbacks, make_setting(endpoint), chunk_size=2)
    assert run.status == JudgeRun.Status.DONE
    assert set(run.items.values_list("state", flat=True)) == {JudgeRunItem.State.ERROR}

    llm_server.default = score_by_answer({})
    run = resume_now(django_capture_on_commit_callbacks, run)

    assert set(run.items.values_list("state", flat=True)) == {JudgeRunItem.State.OK}, "three chunks of retries"
    assert run.status == JudgeRun.Status.DONE
    assert JudgeResult.objects.filter(status="ok").count() == 6 == JudgeResult.objects.count()


def _completion_body(text):
    return json.dumps({
        "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }).encode()


@pytest.mark.parametrize("chunked", [False, True], ids=["with-length", "chunked"])
def test_an_answer_over_the_byte_cap_is_not_read_nor_retried(endpoint, llm_server, responses, settings, chunked,
                                                               django_capture_on_commit_callbacks):
    """A misbehaving endpoint cannot fill a worker's memory: a body over REALMATH_LLM_MAX_REPLY_BYTES
    is refused from its Content-Length, or reading stops at the cap; the other answers go on."""
    settings.LLM_MAX_REPLY_BYTES = 200_000
    llm_server.default = score_by_answer({})
    llm_server.script("Answer 1:", Reply(body=_completion_body("x" * 1_000_000 + " Overall Score: 5"), chunked=chunked))
    llm_server.script("Answer 2:", Reply(body=_completion_body("y" * 100_000 + " Overall Score: 6"), chunked=chunked))
    run = run_now(django_capture_on_commit_callbacks, make_setting(endpoint), response_ids=[r.pk for r in responses[:3]])
    assert run.status == JudgeRun.Status.DONE
    refused = result_for(1)
    assert refused.status == "error" and refused.attempts == 1  # the same request would get the same answer
    assert refused.errors[0]["kind"] == "too_large" and "REALMATH_LLM_MAX_REPLY_BYTES" in refused.errors[0]["message"]
    assert (result_for(2).status, result_for(2).score) == ("ok", 6)  # under the cap: read as before
    assert result_for(0).status == "ok"
    assert sum(1 for r in llm_server.requests if "Answer 1:" in r.text) == 1


def test_a_compressed_answer_is_refused_and_none_is_asked_for(endpoint, llm_server, responses,
                                                               django_capture_on_commit_callbacks):
    """A byte cap on a compressed body would not bound what it inflates to (a gzip bomb): the
    client asks for no compression and refuses an answer compressed anyway."""
    llm_server.default = score_by_answer({})
    bomb = gzip.compress(_completion_body("z" * 5_000_000))
    llm_server.script("Answer 1:", Reply(body=bomb, headers={"Content-Encoding": "gzip"}))
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint), response_ids=[responses[1].pk])
    refused = result_for(1)
    assert refused.status == "error" and refused.errors[0]["kind"] == "too_large"
    assert "compressed" in refused.errors[0]["message"]
    assert all(r.headers.get("accept-encoding") == "identity" for r in llm_server.requests)
