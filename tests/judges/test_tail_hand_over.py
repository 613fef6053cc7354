"""A chunk task in a worker returns once every item has started; its last calls are recorded
by a thread of the same process, which also finishes the run (services.TAILS)."""
import re

import pytest

from grading.judges import services
from grading.models import JudgeResult, JudgeRun, JudgeRunItem
from tests.factories import make_setting
from tests.llm_server import message_text

from .helpers import score_by_answer

# The recording thread has its own database connection: the test's data must be committed.
pytestmark = pytest.mark.django_db(transaction=True)


def _start(setting):
    run = services.start_judge_run(setting, enqueue=False)
    return run, list(JudgeRunItem.objects.filter(run=run).values_list("pk", flat=True))


def _last_two_hang(payload):
    """Answers 0-3 after 0.4 s; answers 4 and 5 (the last to start) only once the test releases them."""
    reply = score_by_answer({0: 3, 1: 7})(payload)
    if re.search(r"Answer [45]:", message_text(payload)):
        reply.hang = 30
    return reply


def test_chunk_returns_before_its_last_calls_and_the_tail_records_them(endpoint, llm_server, responses):
    llm_server.default = _last_two_hang
    llm_server.latency = 0.4
    setting = make_setting(endpoint)  # the endpoint allows 4 calls at once; 6 responses
    run, item_ids = _start(setting)

    report = services.process_judge_chunk(run.pk, run.epoch, item_ids, task_id="t1", hand_over_tail=True)

    assert report.claimed == 6
    assert report.recorded < 6, "the chunk should not wait for its last calls"
    assert JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.RUNNING
    llm_server.release_hangs()
    assert services.finish_tails(timeout=30)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE and run.finished is not None
    assert set(JudgeRunItem.objects.filter(run=run).values_list("state", flat=True)) == {"ok"}
    scores = {r.response.transcript.split(":")[0]: r.score for r in JudgeResult.objects.select_related("response")}
    assert scores["Answer 0"] == 3 and scores["Answer 1"] == 7 and len(scores) == 6
    assert llm_server.request_count == 6


def test_without_hand_over_the_chunk_records_everything_itself(endpoint, llm_server, responses):
    llm_server.default = score_by_answer({})
    setting = make_setting(endpoint)
    run, item_ids = _start(setting)

    report = services.process_judge_chunk(run.pk, run.epoch, item_ids, task_id="t1")

    assert report.recorded == 6
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE


def test_a_tail_only_writes_where_its_claim_still_holds(endpoint, llm_server, responses):
    """A resume while the tail is in flight: the new epoch's claims win, the tail writes nothing."""
    llm_server.default = score_by_answer({})
    llm_server.latency = 0.5
    setting = make_setting(endpoint)
    run, item_ids = _start(setting)
    services.process_judge_chunk(run.pk, run.epoch, item_ids, task_id="t1", hand_over_tail=True)
    taken = JudgeResult.objects.filter(status=JudgeResult.Status.RUNNING).update(claim_owner=f"{run.pk}:2:other")

    assert taken > 0
    assert services.finish_tails(timeout=30)
    assert JudgeResult.objects.filter(claim_owner=f"{run.pk}:2:other", status=JudgeResult.Status.RUNNING).count() == taken
    assert JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.RUNNING  # those items are still open
