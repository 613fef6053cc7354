"""Judge runs through the Batch API, against the loopback server's /v1/files and /v1/batches
(tests/llm_batches.py) with the real openai client: results through the live path's claims,
parsing and cache; partial failures, expiry, cancel, resume, crashes, idempotency."""
import json
from collections import Counter
from decimal import Decimal

import pytest

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


def start(config, django_capture_on_commit_callbacks, **kwargs):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.start_judge_run(config, mode="batch", **kwargs)
    return run


def answer_no(text):
    return int(text.split("Answer ", 1)[1].split(":", 1)[0])


def assert_all_judged_once(run, config, n):
    results = JudgeResult.objects.filter(setting=config)
    assert results.count() == n
    assert set(Counter(results.values_list("response_id", flat=True)).values()) == {1}
    for item in JudgeRunItem.objects.filter(run=run).select_related("result", "response"):
        assert item.state == "ok", (item.state, item.result and item.result.errors)
        assert item.result.score == answer_no(item.response.transcript) % 11


def test_a_batch_run_judges_every_response_once_at_the_batch_price(
        batch_api, endpoint, responses, django_capture_on_commit_callbacks, settings):
    config = make_setting(endpoint, price_input_per_1k=Decimal("1"), price_output_per_1k=Decimal("2"))
    run = start(config, django_capture_on_commit_callbacks)
    assert run.mode == "batch" and run.batch_token
    run = services.run_batch_inline(run, timeout=30)
    assert run.status == JudgeRun.Status.DONE
    assert_all_judged_once(run, config, len(responses))
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
    # half price: cost = tokens at the setting's prices x LLM_BATCH_PRICE_FACTOR
    for result in JudgeResult.objects.filter(setting=config):
        full = (Decimal(result.prompt_tokens) * 1 + Decimal(result.completion_tokens) * 2) / 1000
        assert result.cost == (full * Decimal("0.5")).quantize(Decimal("0.000001"))
    # a second run of the same setting answers from the cache: no new batch
    again = services.run_batch_inline(start(config, django_capture_on_commit_callbacks), timeout=30)
    assert again.status == JudgeRun.Status.DONE and not again.batch_parts.exists()
    assert again.items.filter(cached=True).count() == len(responses)


def llm_calls(batch_api):
    return batch_api.server.count()


def test_files_are_cut_within_the_line_and_byte_limits(batch_api, endpoint, responses,
                                                       django_capture_on_commit_callbacks, settings):
    settings.LLM_BATCH_MAX_LINES = 4
    config = make_setting(endpoint)
    run = services.run_batch_inline(start(config, django_capture_on_commit_callbacks), timeout=30)
    assert run.status == JudgeRun.Status.DONE
    assert sorted(run.batch_parts.values_list("n_lines", flat=True)) == [2, 4]
    one = JudgeBatchLine.objects.filter(run=run).first().n_bytes
    settings.LLM_BATCH_MAX_LINES = 50_000
    settings.LLM_BATCH_MAX_BYTES = one * 3 + 10
    config2 = make_setting(endpoint)
    run2 = services.run_batch_inline(start(config2, django_capture_on_commit_callbacks), timeout=30)
    assert run2.status == JudgeRun.Status.DONE
    for part in run2.batch_parts.all():
        assert len(batch_api.files[part.file_id]["data"]) == part.n_bytes <= settings.LLM_BATCH_MAX_BYTES
    assert_all_judged_once(run2, config2, len(responses))


def test_an_endpoint_without_the_batch_api_is_refused_on_start(llm_server, endpoint, responses):
    config = make_setting(endpoint)
    with pytest.raises(services.RunRefused) as refused:
        services.start_judge_run(config, mode="batch")
    assert "cannot run batches" in str(refused.value) and "/batches answered HTTP 404" in str(refused.value)
    assert not JudgeRun.objects.exists()
