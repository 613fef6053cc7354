"""Judge runs through the Batch API, against the loopback server's /v1/files and /v1/batches
(tests/llm_batches.py) with the real openai client: results through the live path's claims,
parsing and cache; partial failures, expiry, cancel, resume, crashes, idempotency."""
import json
import time
from collections import Counter
from decimal import Decimal

import pytest

from egress import services as egress_services
from egress.models import ProviderCall
from grading.judges import services
from grading.models import JudgeBatchLine, JudgeBatchPart, JudgeResult, JudgeRun, JudgeRunItem
from tests.factories import make_setting
from tests.judges.helpers import score_by_answer
from tests.llm_batches import BatchApi
from tests.llm_server import message_text

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_batches(settings):
    settings.LLM_BATCH_POLL_SECONDS = 0.05
    settings.LLM_BATCH_POLL_MAX_SECONDS = 0.2


@pytest.fixture
def batch_api(llm_server):
    llm_server.default = score_by_answer({n: n % 11 for n in range(100)})
    return BatchApi(llm_server, delay=0.2).install()


def start(setting, django_capture_on_commit_callbacks, **kwargs):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.start_judge_run(setting, mode="batch", **kwargs)
    return run


def answer_no(text):
    return int(text.split("Answer ", 1)[1].split(":", 1)[0])


def assert_all_judged_once(run, setting, n):
    results = JudgeResult.objects.filter(setting=setting)
    assert results.count() == n
    assert set(Counter(results.values_list("response_id", flat=True)).values()) == {1}
    for item in JudgeRunItem.objects.filter(run=run).select_related("result", "response"):
        assert item.state == "ok", (item.state, item.result and item.result.errors)
        assert item.result.score == answer_no(item.response.transcript) % 11


def test_a_batch_run_judges_every_response_once_at_the_batch_price(
        batch_api, endpoint, responses, django_capture_on_commit_callbacks, settings):
    setting = make_setting(endpoint, price_input_per_1k=Decimal("1"), price_output_per_1k=Decimal("2"))
    run = start(setting, django_capture_on_commit_callbacks)
    assert run.mode == "batch" and run.batch_token
    run = services.run_batch_inline(run, timeout=30)
    assert run.status == JudgeRun.Status.DONE
    assert_all_judged_once(run, setting, len(responses))
    assert llm_calls(batch_api) == 0, "no live call"
    part = JudgeBatchPart.objects.get(run=run)
    assert part.status == "completed" and part.collected and part.n_lines == len(responses)
    # the lines are the live calls' bodies, the cache key as custom_id
    uploaded = batch_api.files[part.file_id]
    lines = [json.loads(raw) for raw in uploaded["data"].splitlines()]
    assert uploaded["meta"]["purpose"] == "batch"
    keys = set(JudgeRunItem.objects.filter(run=run).values_list("cache_key", flat=True))
    assert {line["custom_id"] for line in lines} == keys
    assert all(line["method"] == "POST" and line["url"] == "/v1/chat/completions" for line in lines)
    assert lines[0]["body"]["model"] == "judge-model" and lines[0]["body"]["max_tokens"] == 512
    assert batch_api.batches[part.batch_id]["meta"]["metadata"] == {
        "realmath_run": str(run.pk), "realmath_part": "1", "realmath_token": run.batch_token}
    # the provider-call log names what the looks sent: the upload and the batch, as purpose "batch"
    egress_services.flush()
    logged = list(ProviderCall.objects.filter(purpose="batch").values_list("method", "path"))
    assert ("POST", "/v1/files") in logged and ("POST", "/v1/batches") in logged
    # half price: cost = tokens at the setting's prices x LLM_BATCH_PRICE_FACTOR
    for result in JudgeResult.objects.filter(setting=setting):
        full = (Decimal(result.prompt_tokens) * 1 + Decimal(result.completion_tokens) * 2) / 1000
        assert result.cost == (full * Decimal("0.5")).quantize(Decimal("0.000001"))
    # a second run of the same setting answers from the cache: no new batch
    again = services.run_batch_inline(start(setting, django_capture_on_commit_callbacks), timeout=30)
    assert again.status == JudgeRun.Status.DONE and not again.batch_parts.exists()
    assert again.items.filter(cached=True).count() == len(responses)


def llm_calls(batch_api):
    return batch_api.server.count()


def test_files_are_cut_within_the_line_and_byte_limits(batch_api, endpoint, responses,
                                                       django_capture_on_commit_callbacks, settings):
    settings.LLM_BATCH_MAX_LINES = 4
    setting = make_setting(endpoint)
    run = services.run_batch_inline(start(setting, django_capture_on_commit_callbacks), timeout=30)
    assert run.status == JudgeRun.Status.DONE
    assert sorted(run.batch_parts.values_list("n_lines", flat=True)) == [2, 4]
    one = JudgeBatchLine.objects.filter(run=run).first().n_bytes
    settings.LLM_BATCH_MAX_LINES = 50_000
    settings.LLM_BATCH_MAX_BYTES = one * 3 + 10
    setting2 = make_setting(endpoint)
    run2 = services.run_batch_inline(start(setting2, django_capture_on_commit_callbacks), timeout=30)
    assert run2.status == JudgeRun.Status.DONE
    for part in run2.batch_parts.all():
        assert len(batch_api.files[part.file_id]["data"]) == part.n_bytes <= settings.LLM_BATCH_MAX_BYTES
    assert_all_judged_once(run2, setting2, len(responses))


def test_an_endpoint_without_the_batch_api_is_refused_on_start(llm_server, endpoint, responses):
    setting = make_setting(endpoint)
    with pytest.raises(services.RunRefused) as refused:
        services.start_judge_run(setting, mode="batch")
    assert "cannot run batches" in str(refused.value) and "/batches answered HTTP 404" in str(refused.value)
    assert not JudgeRun.objects.exists()


def failing(*numbers):
    marks = tuple(f"Answer {n}:" for n in numbers)
    return lambda custom_id, body: "scripted line failure" if any(m in message_text(body) for m in marks) else None


def test_failed_lines_are_retried_as_live_calls(batch_api, endpoint, responses, django_capture_on_commit_callbacks):
    batch_api.fail = failing(1, 4)
    setting = make_setting(endpoint, price_input_per_1k=Decimal("1"), price_output_per_1k=Decimal("1"))
    run = services.run_batch_inline(start(setting, django_capture_on_commit_callbacks), timeout=30)
    assert run.status == JudgeRun.Status.DONE
    assert_all_judged_once(run, setting, len(responses))
    assert llm_calls(batch_api) == 2 and batch_api.server.count("Answer 1:") == 1
    assert run.batch_parts.count() == 1
    lines = JudgeBatchLine.objects.filter(run=run)
    assert lines.filter(state="failed").count() == 2
    assert lines.get(state="failed", custom_id__in=[i.cache_key for i in run.items.filter(response__transcript__startswith="Answer 1:")]).errors[0]["status"] == 500
    live = JudgeResult.objects.get(setting=setting, response__transcript__startswith="Answer 1:")
    full = Decimal(live.prompt_tokens + live.completion_tokens) / 1000
    assert live.cost == full.quantize(Decimal("0.000001")), "a live retry is paid in full"


def test_failed_lines_can_go_into_a_next_batch(batch_api, endpoint, responses, django_capture_on_commit_callbacks):
    first = failing(2)
    seen_failures = []

    def once(custom_id, body):
        if first(custom_id, body) and custom_id not in seen_failures:
            seen_failures.append(custom_id)
            return "scripted line failure"
        return None

    batch_api.fail = once
    setting = make_setting(endpoint)
    run = services.run_batch_inline(start(setting, django_capture_on_commit_callbacks, batch_retry="batch"), timeout=30)
    assert run.status == JudgeRun.Status.DONE
    assert_all_judged_once(run, setting, len(responses))
    assert llm_calls(batch_api) == 0
    parts = list(run.batch_parts.order_by("number"))
    assert [p.n_lines for p in parts] == [len(responses), 1]
    second = [cid for batch, cid in batch_api.seen if batch == parts[1].batch_id]
    assert second == seen_failures
    assert JudgeBatchLine.objects.get(run=run, custom_id=seen_failures[0]).sends == 2


def test_an_expired_batch_keeps_its_answers_and_retries_the_rest(batch_api, endpoint, responses,
                                                                django_capture_on_commit_callbacks):
    batch_api.plan("expire", keep=2)
    setting = make_setting(endpoint)
    run = services.run_batch_inline(start(setting, django_capture_on_commit_callbacks), timeout=30)
    assert run.status == JudgeRun.Status.DONE
    assert_all_judged_once(run, setting, len(responses))
    part = run.batch_parts.get()
    assert part.status == "expired"
    assert llm_calls(batch_api) == len(responses) - 2, "only the expired lines are called live"
    codes = Counter(e["code"] for line in JudgeBatchLine.objects.filter(run=run, state="failed") for e in line.errors)
    assert codes == {"batch_expired": len(responses) - 2}


def test_expired_lines_in_a_next_batch_then_given_up_as_failed_calls(batch_api, endpoint, responses, settings,
                                                                     django_capture_on_commit_callbacks):
    settings.LLM_BATCH_MAX_SENDS = 2
    for _ in range(3):
        batch_api.plan("expire", keep=0)
    setting = make_setting(endpoint)
    run = services.run_batch_inline(start(setting, django_capture_on_commit_callbacks, batch_retry="batch"), timeout=30)
    assert run.status == JudgeRun.Status.DONE
    assert run.batch_parts.count() == 2, "sent twice (LLM_BATCH_MAX_SENDS), then given up"
    assert set(run.items.values_list("state", flat=True)) == {"error"}
    result = JudgeResult.objects.filter(setting=setting).first()
    assert result.status == "error" and result.errors[-1]["code"] == "batch_expired"
    assert llm_calls(batch_api) == 0


def test_cancel_keeps_what_the_batch_answered_and_resume_sends_only_the_rest(
        batch_api, endpoint, responses, django_capture_on_commit_callbacks):
    batch_api.delay = 30
    batch_api.plan("complete", keep=2)  # cancelled: the first two lines were answered
    setting = make_setting(endpoint)
    run = start(setting, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    services.advance_batch_run(JudgeRun.objects.get(pk=run.pk))
    time.sleep(0.2)  # validated: the provider is answering it
    services.advance_batch_run(JudgeRun.objects.get(pk=run.pk))
    part = run.batch_parts.get()
    assert part.batch_id and part.status == "in_progress"
    with django_capture_on_commit_callbacks(execute=True):
        run = services.cancel_judge_run(run)
    run = services.run_batch_inline(run, timeout=30)
    part.refresh_from_db()
    assert run.status == JudgeRun.Status.CANCELLED
    assert part.cancel_requested and part.status == "cancelled" and part.collected
    assert batch_api.count("POST", f"/batches/{part.batch_id}/cancel") == 1
    assert run.items.filter(state="ok").count() == 2 and run.items.filter(state="pending").count() == 4
    assert llm_calls(batch_api) == 0, "a cancelled run makes no live call"
    answered = {cid for _, cid in batch_api.seen}

    batch_api.delay = 0.2
    with django_capture_on_commit_callbacks(execute=True):
        run = services.resume_judge_run(run)
    run = services.run_batch_inline(run, timeout=30)
    assert run.status == JudgeRun.Status.DONE and run.epoch == 2
    assert_all_judged_once(run, setting, len(responses))
    second = [cid for batch, cid in batch_api.seen if batch != part.batch_id]
    assert len(second) == 4 and not set(second) & answered
    assert llm_calls(batch_api) == 0


class Killed(BaseException):
    """A worker killed mid-step (nothing after this point of the step happens)."""


@pytest.mark.parametrize("step", ["upload", "create", "retrieve", "download"])
def test_a_look_killed_at_any_step_loses_nothing_and_sends_nothing_twice(
        step, batch_api, endpoint, responses, django_capture_on_commit_callbacks, monkeypatch):
    import llm

    real = getattr(llm.BatchClient, step)
    killed = []

    def once(self, *args, **kwargs):
        value = real(self, *args, **kwargs)
        if step == "retrieve" and value.status != "completed":
            return value
        if not killed:
            killed.append(step)
            raise Killed(step)  # the provider did it; we never stored what it answered
        return value

    monkeypatch.setattr(llm.BatchClient, step, once)
    setting = make_setting(endpoint)
    run = start(setting, django_capture_on_commit_callbacks)
    for _ in range(200):
        try:
            run = services.run_batch_inline(run, timeout=30)
            break
        except Killed:
            continue
    assert killed == [step]
    assert run.status == JudgeRun.Status.DONE
    assert_all_judged_once(run, setting, len(responses))
    assert batch_api.count("POST", "/files") == 1, "the file is uploaded once"
    assert batch_api.count("POST", "/batches") == 1, "the batch is created once"
    assert len(batch_api.seen) == len(responses) == len(set(batch_api.seen))
    assert llm_calls(batch_api) == 0


def test_reading_a_part_again_attaches_nothing_twice(batch_api, endpoint, responses, django_capture_on_commit_callbacks):
    setting = make_setting(endpoint)
    run = services.run_batch_inline(start(setting, django_capture_on_commit_callbacks), timeout=30)
    before = list(JudgeResult.objects.filter(setting=setting).order_by("id").values_list("id", "score", "cost", "finished"))
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING, finished=None)
    JudgeBatchPart.objects.filter(run=run).update(collected=None)
    JudgeRunItem.objects.filter(run=run, response=responses[0]).update(state="pending")
    run = services.run_batch_inline(JudgeRun.objects.get(pk=run.pk), timeout=30)
    after = list(JudgeResult.objects.filter(setting=setting).order_by("id").values_list("id", "score", "cost", "finished"))
    assert after == before, "no result written again, none added"
    assert run.status == JudgeRun.Status.DONE and run.items.filter(state="ok").count() == len(responses)
    assert JudgeBatchLine.objects.filter(run=run, state="answered").count() == len(responses)


def test_samples_and_parse_retries_go_through_the_batch_too(batch_api, endpoint, rubric_question,
                                                            django_capture_on_commit_callbacks, llm_server):
    from tests.factories import make_responses
    from tests.llm_server import Reply

    make_responses(rubric_question, 2)
    llm_server.script("Answer 0:", Reply("no score here"))  # the first sample of answer 0 cannot be read
    setting = make_setting(endpoint, samples=2, parse_retries=1)
    run = services.run_batch_inline(start(setting, django_capture_on_commit_callbacks), timeout=30)
    assert run.status == JudgeRun.Status.DONE
    assert run.batch_parts.count() == 2, "the parse retry goes into a next batch"
    lines = JudgeBatchLine.objects.filter(run=run)
    assert lines.count() == 5  # 2 samples x 2 answers + 1 retry
    assert len({line.custom_id for line in lines}) == 5 and all(len(line.custom_id) <= 64 for line in lines)
    assert set(run.items.values_list("state", flat=True)) == {"ok"}
    assert llm_calls(batch_api) == 0


def test_the_api_starts_a_batch_run_and_shows_its_batches(batch_api, endpoint, responses, reviewer):
    from tests.conftest import api_client_for

    batch_api.delay = 30  # still at the provider when it is cancelled
    setting = make_setting(endpoint)
    api = api_client_for(reviewer)
    made = api.post("/api/judge-runs/", {"config": setting.pk, "mode": "batch", "batch_retry": "batch"}, format="json")
    assert made.status_code == 201, made.content
    assert (made.json()["mode"], made.json()["batch_retry"]) == ("batch", "batch")
    run = JudgeRun.objects.get(pk=made.json()["id"])
    services.advance_batch_run(run)
    progress = api.get(f"/api/judge-runs/{run.pk}/progress/").json()
    assert progress["mode"] == "batch" and progress["batch"]["open_parts"] == 1
    assert progress["batch"]["requests_total"] == len(responses) and progress["batch"]["deadline"]
    cancelled = api.post(f"/api/judge-runs/{run.pk}/cancel/")
    assert cancelled.json()["status"] == "cancelled"
    services.run_batch_inline(JudgeRun.objects.get(pk=run.pk), timeout=30)
    assert JudgeBatchPart.objects.get(run=run).cancel_requested
    batch_api.delay = 0.2
    resumed = api.post(f"/api/judge-runs/{run.pk}/resume/")
    assert resumed.json()["epoch"] == 2
    run = services.run_batch_inline(JudgeRun.objects.get(pk=run.pk), timeout=30)
    assert run.status == JudgeRun.Status.DONE
    assert_all_judged_once(run, setting, len(responses))
    refused = api.post("/api/judge-runs/", {"config": setting.pk, "mode": "sideways"}, format="json")
    assert refused.status_code == 400


def test_run_judges_batch_inline(batch_api, endpoint, responses):
    from io import StringIO

    from django.core.management import call_command

    setting = make_setting(endpoint, name="cli-batch")
    out = StringIO()
    call_command("run_judges", "--setting", "cli-batch", "--batch", "--inline", stdout=out)
    run = JudgeRun.objects.get(setting=setting)
    assert run.mode == "batch" and run.status == JudgeRun.Status.DONE
    assert_all_judged_once(run, setting, len(responses))


def test_the_start_page_says_why_an_endpoint_cannot_run_batches(llm_server, endpoint, responses, reviewer_client):
    setting = make_setting(endpoint)
    page = reviewer_client.post("/grading/judges/runs/new/", {"config": setting.pk, "mode": "batch", "batch_retry": "live"})
    assert page.status_code == 200
    text = page.content.decode()
    assert "cannot run batches" in text and "answered HTTP 404" in text
    assert not JudgeRun.objects.exists()


def test_a_run_has_one_poll_chain(batch_api, endpoint, responses, django_capture_on_commit_callbacks, monkeypatch):
    run = start(make_setting(endpoint), django_capture_on_commit_callbacks)
    run.refresh_from_db()
    chain = run.batch_chain
    assert chain and run.batch_next_poll
    assert services.poll_batch_run(run.pk, "an-older-chain") == "stopped"
    assert services.poll_batch_run(run.pk, chain) == "polling"  # the batch is at the provider
    run.refresh_from_db()
    assert run.batch_chain != chain and run.batch_parts.count() == 1
    assert services.poll_batch_run(run.pk, chain) == "stopped", "a redelivered earlier poll does nothing"

    def broken(run):
        raise RuntimeError("a bug in a look")

    monkeypatch.setattr("grading.judges.services.batches.advance_batch_run", broken)
    assert services.poll_batch_run(run.pk, run.batch_chain) == "polling", "a failed look keeps the chain alive"


def test_a_batch_refused_as_a_whole_is_sent_again_as_a_batch_not_live(batch_api, endpoint, responses, settings,
                                                                      django_capture_on_commit_callbacks):
    batch_api.plan("fail")  # the provider refuses the first file at validation
    setting = make_setting(endpoint)
    run = services.run_batch_inline(start(setting, django_capture_on_commit_callbacks), timeout=30)
    assert run.status == JudgeRun.Status.DONE
    assert_all_judged_once(run, setting, len(responses))
    first, second = run.batch_parts.order_by("number")
    assert first.status == "failed" and first.errors[0]["message"] == "scripted validation failure"
    assert second.status == "completed" and second.n_lines == len(responses)
    assert llm_calls(batch_api) == 0, "retry 'live' does not turn a refused file into live calls"

    settings.LLM_BATCH_MAX_SENDS = 1
    batch_api.plan("fail")
    setting2 = make_setting(endpoint)
    run2 = services.run_batch_inline(start(setting2, django_capture_on_commit_callbacks), timeout=30)
    assert set(run2.items.values_list("state", flat=True)) == {"error"} and llm_calls(batch_api) == 0
