"""A real Celery worker on the real broker: killed with SIGKILL mid-run, the run resumed,
and not one result missing or duplicated.

The worker is a separate process, so it must reach the test database: PostgreSQL's test
database by name; SQLite's only if it is a file. When the suite runs on SQLite's in-memory
test database, this test first moves it into a file (SQLite's backup API copies schema and
data in milliseconds) and points the test's own connection there for its duration.
"""
import re
from collections import Counter

import pytest

from grading.judges import services
from grading.models import JudgeResult, JudgeRun, JudgeRunItem
from tests.factories import make_endpoint, make_question, make_responses, make_setting
from tests.llm_server import LlmServer, Reply, message_text
from tests.workers import Worker, judge_worker_env, on_a_database_workers_reach, purge_queue, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

N_RESPONSES = 40
CONCURRENCY = 4
CHUNK = 8
LATENCY = 0.3


def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path, settings):
    on_a_database_workers_reach(tmp_path, lambda: _scenario(tmp_path, settings))


def _answer_no(text):
    match = re.search(r"Answer (\d+):", text)
    return int(match.group(1)) if match else None


def _scenario(tmp_path, settings):
    queue, env = judge_worker_env(tmp_path, settings, "judges-test")
    workers = []

    def reply(payload):
        number = _answer_no(message_text(payload))
        return Reply(f"Reasoning.\n\nOverall Score: {number % 11}")

    with LlmServer(default=reply, latency=LATENCY) as server:
        try:
            question = make_question("Integration problem: find x.", full_score=10)
            make_responses(question, N_RESPONSES)
            endpoint = make_endpoint(server, max_concurrency=CONCURRENCY, timeout_seconds=1.0, max_attempts=3)
            setting = make_setting(endpoint, name=f"integration-{queue}")

            # Two workers share the queue; one of them is killed in the middle of the run.
            workers = [Worker(env, tmp_path / f"worker{n}.log") for n in (1, 2)]
            for worker in workers:
                worker.wait_ready()
            run = services.start_judge_run(setting, chunk_size=CHUNK)  # autocommit: queued at once
            finished = lambda: JudgeRunItem.objects.filter(run=run).exclude(state="pending").count()  # noqa: E731
            wait_for(lambda: finished() >= 12, 60, "the first results")
            workers[0].kill()
            done_at_kill = finished()
            answered = {_answer_no(t) for t in JudgeResult.objects.filter(setting=setting, status=JudgeResult.Status.OK)
                        .values_list("response__transcript", flat=True)}
            assert 12 <= done_at_kill < N_RESPONSES, "the worker must die mid-run"
            run.refresh_from_db()
            assert run.status == JudgeRun.Status.RUNNING

            # What the killed worker had claimed or fetched is only finished after a resume.
            run = services.resume_judge_run(run)
            assert run.epoch == 2
            wait_for(lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE, 120, "the resumed run")
        finally:
            for worker in workers:
                worker.stop()
            purge_queue(queue)

        results = JudgeResult.objects.filter(setting=setting)
        assert results.count() == N_RESPONSES, "zero missing, zero duplicated"
        per_response = Counter(results.values_list("response_id", flat=True))
        assert len(per_response) == N_RESPONSES and set(per_response.values()) == {1}
        assert not results.exclude(status=JudgeResult.Status.OK).exists()
        items = JudgeRunItem.objects.filter(run=run).select_related("result", "response")
        assert all(i.state == "ok" and i.result.response_id == i.response_id for i in items)
        for item in items:
            assert item.result.score == _answer_no(item.response.transcript) % 11

        asked = Counter(_answer_no(r.text) for r in server.requests if r.status == 200)
        assert set(asked) == set(range(N_RESPONSES)), "every response was judged"
        assert all(asked[n] == 1 for n in answered), "finished work is never asked again"
        repeated = sum(n - 1 for n in asked.values())
        # Made again: the killed worker's calls in flight, and the live worker's calls in flight or
        # claimed ahead when the resume took their claims over, plus what it started before it saw
        # the new epoch (it looks every CANCEL_CHECK_SECONDS): a few times the concurrency at most.
        assert repeated <= 3 * CONCURRENCY, asked
