"""A chunk claims its items in batches a little ahead of the free slots (at least half the
endpoint's concurrency at a time), not one query per freed slot; claims taken ahead that never
started are removed when the chunk stops, so a cancelled run leaves no stale claim behind."""
from unittest import mock

import pytest

from grading.judges import services
from grading.judges.services import chunks
from grading.models import JudgeResult, JudgeRun, JudgeRunItem
from grading.runs.engine import RunEngine
from tests.factories import make_responses, make_setting
from tests.llm_server import message_text

from .helpers import score_by_answer

pytestmark = pytest.mark.django_db


def _start(setting):
    run = services.start_judge_run(setting, enqueue=False)
    return run, list(JudgeRunItem.objects.filter(run=run).values_list("pk", flat=True))


def _spy_on_claims():
    sizes = []
    real = chunks.claim_chunk_items

    def counting(run, batch, *args):
        sizes.append(len(batch))
        return real(run, batch, *args)

    return sizes, mock.patch.object(chunks, "claim_chunk_items", side_effect=counting)


def test_items_are_claimed_in_batches_of_at_least_half_the_width(endpoint, llm_server, rubric_question):
    make_responses(rubric_question, 24)
    llm_server.default = score_by_answer({})
    llm_server.latency = 0.05
    endpoint.max_concurrency = 4
    endpoint.save()
    run, item_ids = _start(make_setting(endpoint))
    sizes, spy = _spy_on_claims()

    with spy:
        report = services.process_judge_chunk(run.pk, run.epoch, item_ids, task_id="t1")

    assert report.claimed == 24 and report.recorded == 24
    assert sizes[0] == 4  # the first batch fills every slot
    assert all(size >= 2 for size in sizes[:-1]), sizes  # then half the width at a time, never one by one
    assert sum(sizes) == 24 and len(sizes) <= 11
    assert llm_server.request_count == 24  # each item judged once
    assert set(JudgeRunItem.objects.filter(run=run).values_list("state", flat=True)) == {"ok"}
    assert JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE


def test_a_cancelled_chunk_removes_the_claims_it_took_ahead(endpoint, llm_server, rubric_question):
    """Answer 0 comes back at once, the others hang: the freed slot claims two items (one starts,
    one waits); the run is cancelled then. The waiting claim is removed, nothing is judged twice
    after the resume."""
    make_responses(rubric_question, 12)
    scored = score_by_answer({})

    def first_fast_others_hang(payload):
        reply = scored(payload)
        if "Answer 0:" not in message_text(payload):
            reply.hang = 10
        return reply

    llm_server.default = first_fast_others_hang
    endpoint.max_concurrency = 4
    endpoint.save()
    run, item_ids = _start(make_setting(endpoint))
    real_is_live = RunEngine.is_live
    dropped = []
    real_drop = chunks._drop_unstarted_claims

    def cancel_once_a_claim_waits(engine, run_id, epoch):
        if llm_server.request_count >= 1 and llm_server.in_flight >= 4 and not dropped:
            services.cancel_judge_run(JudgeRun.objects.get(pk=run_id))
            llm_server.release_hangs()
            dropped.append("cancelled")
        return real_is_live(engine, run_id, epoch)

    def spy_drop(ready, owner):
        dropped.append(len(ready))
        return real_drop(ready, owner)

    with mock.patch.object(chunks, "CANCEL_CHECK_SECONDS", 0), \
            mock.patch.object(RunEngine, "is_live", autospec=True, side_effect=cancel_once_a_claim_waits), \
            mock.patch.object(chunks, "_drop_unstarted_claims", side_effect=spy_drop):
        report = services.process_judge_chunk(run.pk, run.epoch, item_ids, task_id="t1")

    assert dropped == ["cancelled", 1]  # one claim was waiting for a slot when the run stopped
    assert llm_server.request_count == 5 and report.recorded == 5
    assert not JudgeResult.objects.filter(status=JudgeResult.Status.RUNNING).exists()
    assert JudgeResult.objects.count() == 5  # every row answers a call that was made
    states = list(JudgeRunItem.objects.filter(run=run).values_list("state", flat=True))
    assert states.count("ok") == 5 and states.count("pending") == 7

    run.refresh_from_db()
    services.resume_judge_run(run, enqueue=False)
    run.refresh_from_db()
    services.process_judge_chunk(run.pk, run.epoch, item_ids, task_id="t2")
    assert llm_server.request_count == 12  # the other seven, and nothing twice
    assert set(JudgeRunItem.objects.filter(run=run).values_list("state", flat=True)) == {"ok"}
