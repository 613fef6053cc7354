"""A run whose worker was killed is taken over automatically (grading.runs.engine watchdog; issue 29, item 11)."""
from datetime import timedelta

import pytest
from django.utils import timezone

from grading.judges import services
from grading.judges import tasks as judge_tasks
from grading.judges.kinds import get_kind
from grading.models import JudgeResult, JudgeRun
from grading.runs import claims
from grading.runs import engine as runs
from grading.runs import tasks as run_tasks
from tests.factories import make_responses, make_setting

from .helpers import score_by_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def half_done(endpoint, llm_server, rubric_question, django_capture_on_commit_callbacks):
    """A run of 4 whose worker answered 2, claimed a third, and was killed."""
    make_responses(rubric_question, 4)
    llm_server.default = score_by_answer({})
    with django_capture_on_commit_callbacks(execute=False):
        run = services.start_judge_run(make_setting(endpoint), chunk_size=2)
    ids = list(run.items.order_by("id").values_list("pk", flat=True))
    services.process_judge_chunk(run.pk, run.epoch, ids[:2], task_id="t1")
    item = run.items.get(pk=ids[2])
    setting = run.setting
    key = services.cache_key(setting, get_kind(setting.kind).fingerprint(
        services.judge_spec(setting), services.judge_input(item.response)))
    JudgeResult.objects.create(setting=setting, response=item.response, cache_key=key, run=run,
                               claim_owner=claims.owner_tag(run.pk, run.epoch, "t2"), claimed_at=timezone.now())
    return run


def age(run, seconds):
    """Move the run's history `seconds` into the past."""
    then = timezone.now() - timedelta(seconds=seconds)
    JudgeRun.objects.filter(pk=run.pk).update(created=then)
    JudgeResult.objects.filter(run=run).update(finished=then, claimed_at=then)


def test_a_silent_run_is_taken_over_once_its_claims_lease_has_passed(half_done, llm_server,
                                                                     django_capture_on_commit_callbacks):
    limit = services.JUDGE_RUNS.takeover_seconds(half_done)
    assert limit == claims.lease_for(half_done.setting.endpoint).total_seconds()
    age(half_done, limit - 30)
    assert services.JUDGE_RUNS.watch(half_done.pk, half_done.epoch) == "watching"
    half_done.refresh_from_db()
    assert half_done.epoch == 1 and half_done.status == "running"  # a slow worker is not doubled

    age(half_done, limit + 5)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.JUDGE_RUNS.watch(half_done.pk, half_done.epoch) == "taken over"
    half_done.refresh_from_db()
    assert half_done.status == "done" and half_done.epoch == 2
    assert llm_server.request_count == 4  # the claimed item and the last one, once each
    assert JudgeResult.objects.filter(run=half_done, status="ok").count() == 4


def test_the_watch_stops_with_the_run_and_leaves_a_looping_run_to_a_person(half_done):
    age(half_done, 10_000)
    assert services.JUDGE_RUNS.watch(half_done.pk, half_done.epoch + 1) == "stopped"  # an older watch
    assert services.JUDGE_RUNS.watch(half_done.pk, half_done.epoch, runs.MAX_TAKEOVERS) == "left"
    half_done.refresh_from_db()
    assert half_done.epoch == 1
    services.cancel_judge_run(half_done)
    assert services.JUDGE_RUNS.watch(half_done.pk, half_done.epoch) == "stopped"


@pytest.fixture
def not_eager():
    from config.celery import app

    app.conf.task_always_eager = False  # the autouse _eager_celery fixture puts it back
    yield


def test_starting_a_run_schedules_its_watch(endpoint, responses, django_capture_on_commit_callbacks, monkeypatch,
                                            not_eager):
    sent = []
    monkeypatch.setattr(run_tasks.watch_run_task, "apply_async", lambda args, countdown: sent.append((args, countdown)))
    monkeypatch.setattr(judge_tasks.run_judge_chunk_task, "apply_async", lambda args: None)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.start_judge_run(make_setting(endpoint))
    assert sent == [(["grading.judges.services.JUDGE_RUNS", run.pk, 1, 0], runs.WATCH_SECONDS)]
    sent.clear()
    assert runs.watch_running() == 1 and sent == [(["grading.judges.services.JUDGE_RUNS", run.pk, 1, 0], 0)]
    sent.clear()
    assert run_tasks.watch_run_task("grading.judges.services.JUDGE_RUNS", run.pk, 1) == "watching"
    assert len(sent) == 1 and 0 < sent[0][1] <= runs.WATCH_SECONDS  # it looks again
    assert run_tasks.watch_run_task("os.system", run.pk, 1) == "unknown engine"


def test_every_engine_is_found_by_its_name():
    from django.utils.module_loading import import_string

    assert {"studies.services.PROBE_RUNS", "studies.geometry.services.GEOMETRY_RUNS"} < set(runs.engine_paths())
    for path in runs.engine_paths():
        engine = import_string(path)
        assert engine.name == path and engine.last_activity is not None and engine.endpoint_of is not None
