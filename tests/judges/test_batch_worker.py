"""A batch run on a real Celery worker, killed (SIGKILL) while the batch it asked for is being
created, after its file was uploaded and before it could store the batch's id or poll it: a
second worker resumes the run, finds the batch by its metadata instead of creating another,
polls it, and attaches every answer once."""
from collections import Counter

import pytest

from grading.judges import services
from grading.models import JudgeBatchPart, JudgeResult, JudgeRun, JudgeRunItem
from tests.factories import make_endpoint, make_question, make_responses, make_setting
from tests.llm_batches import BatchApi
from tests.llm_server import LlmServer
from tests.workers import Worker, judge_worker_env, on_a_database_workers_reach, purge_queue, wait_for

from .helpers import score_by_answer

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

N = 20


def test_a_worker_killed_between_upload_and_polling_loses_and_repeats_nothing(tmp_path, settings):
    on_a_database_workers_reach(tmp_path, lambda: _scenario(tmp_path, settings))


def _scenario(tmp_path, settings):
    queue, env = judge_worker_env(tmp_path, settings, "batch-test")
    env.update(REALMATH_LLM_BATCH_POLL_SECONDS="0.2", REALMATH_LLM_BATCH_POLL_MAX_SECONDS="0.5")
    workers = []
    with LlmServer(default=score_by_answer({n: n % 11 for n in range(N)})) as server:
        batches = BatchApi(server, delay=1.0, create_latency=4.0).install()
        try:
            question = make_question("Batch worker problem: find x.", full_score=10)
            make_responses(question, N)
            setting = make_setting(make_endpoint(server, timeout_seconds=2.0), name=f"batch-{queue}")
            workers.append(Worker(env, tmp_path / "worker1.log"))
            workers[0].wait_ready()
            run = services.start_judge_run(setting, mode="batch")  # autocommit: the poll is queued at once
            part = lambda: JudgeBatchPart.objects.filter(run=run).first()  # noqa: E731
            wait_for(lambda: part() is not None and part().file_id, 60, "the uploaded file")
            wait_for(lambda: batches.count("POST", "/batches") == 1, 10, "the batch being created")
            workers[0].kill()  # while the provider creates the batch: its id never reaches the database
            assert part().batch_id == "" and len(batches.batches) in (0, 1)
            wait_for(lambda: len(batches.batches) == 1, 10, "the provider to finish creating the batch")
            assert JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.RUNNING

            workers.append(Worker(env, tmp_path / "worker2.log"))
            workers[1].wait_ready()
            run = services.resume_judge_run(JudgeRun.objects.get(pk=run.pk))
            assert run.epoch == 2
            wait_for(lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE, 120, "the resumed run")
        finally:
            for worker in workers:
                worker.stop()
            purge_queue(queue)

        assert batches.count("POST", "/files") == 1, "the file was uploaded once"
        assert batches.count("POST", "/batches") == 1, "the batch was created once, found again by its metadata"
        only = JudgeBatchPart.objects.get(run=run)
        assert only.batch_id == next(iter(batches.batches)) and only.status == "completed"
        assert Counter(cid for _, cid in batches.seen) == Counter(
            JudgeRunItem.objects.filter(run=run).values_list("cache_key", flat=True)), "each custom_id once"
        results = JudgeResult.objects.filter(setting=setting)
        assert results.count() == N and set(Counter(results.values_list("response_id", flat=True)).values()) == {1}
        for item in JudgeRunItem.objects.filter(run=run).select_related("result", "response"):
            assert item.state == "ok" and item.result.score == int(item.response.transcript.split()[1][:-1]) % 11
        assert server.count() == 0, "no live call"
