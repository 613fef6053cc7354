"""Result cache: (setting version, response content) keys; re-runs make no call."""
import pytest

from annotation.models import Response, content_hash
from grading.judges import services
from grading.judges.kinds import get_kind
from grading.models import JudgeResult, JudgeRun
from grading.runs import claims
from tests.factories import make_responses, make_setting

from .helpers import run_now, score_by_answer

pytestmark = pytest.mark.django_db


def test_rerun_of_unchanged_setting_makes_zero_calls(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    llm_server.default = score_by_answer({})
    setting = make_setting(endpoint)
    run_now(django_capture_on_commit_callbacks, setting)
    assert llm_server.request_count == 6
    again = run_now(django_capture_on_commit_callbacks, setting)
    assert llm_server.request_count == 6
    assert again.status == JudgeRun.Status.DONE
    assert again.items.filter(cached=True, state="ok").count() == 6
    assert JudgeResult.objects.count() == 6


def test_new_version_or_edited_answer_calls_again(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    llm_server.default = score_by_answer({})
    setting = make_setting(endpoint)
    run_now(django_capture_on_commit_callbacks, setting)
    edited = responses[0]
    edited.transcript = "Answer 0: $x = \\pm 2$"
    edited.transcript_hash = content_hash(edited.transcript)
    edited.save()
    run_now(django_capture_on_commit_callbacks, setting)
    assert llm_server.request_count == 7  # only the edited answer
    assert JudgeResult.objects.filter(response=edited).count() == 2

    newer = services.update_judge_setting(setting, temperature=0.3)
    assert newer.version == 2 and newer.pk != setting.pk
    run_now(django_capture_on_commit_callbacks, newer)
    assert llm_server.request_count == 13


def test_same_content_for_two_students_is_judged_once(endpoint, llm_server, rubric_question, django_capture_on_commit_callbacks):
    llm_server.default = score_by_answer({})
    text = "Answer 9: $x = 2$ or $x = -2$"
    for student in ("s1", "s2", "s3"):
        Response.objects.create(question=rubric_question, student_id=student, transcript=text, transcript_hash=content_hash(text))
    run = run_now(django_capture_on_commit_callbacks, make_setting(endpoint))
    assert llm_server.request_count == 1
    results = JudgeResult.objects.order_by("id")
    assert results.count() == 3 and len({r.score for r in results}) == 1
    assert results.filter(copied_from__isnull=False).count() == 2
    assert run.items.filter(cached=True).count() == 2


def test_duplicate_delivery_of_a_chunk_adds_nothing(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    """A chunk delivered twice (acks_late after a lost worker) neither calls nor writes twice."""
    llm_server.default = score_by_answer({})
    setting = make_setting(endpoint)
    with django_capture_on_commit_callbacks(execute=False):
        run = services.start_judge_run(setting)
    ids = list(run.items.values_list("pk", flat=True))
    services.process_judge_chunk(run.pk, run.epoch, ids, task_id="task-a")
    services.process_judge_chunk(run.pk, run.epoch, ids, task_id="task-a")
    services.process_judge_chunk(run.pk, run.epoch, ids, task_id="task-b")
    assert llm_server.request_count == 6
    assert JudgeResult.objects.count() == 6


def _key_of(setting, item):
    """The cache key a chunk claims for the item's response under the setting."""
    return services.cache_key(setting, get_kind(setting.kind).fingerprint(
        services.judge_spec(setting), services.judge_input(item.response)))


def test_claim_left_by_a_dead_delivery_is_taken_over(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    llm_server.default = score_by_answer({})
    setting = make_setting(endpoint)
    with django_capture_on_commit_callbacks(execute=False):
        run = services.start_judge_run(setting)
    item = run.items.first()
    key = _key_of(setting, item)
    # A worker claimed the item under this task id and was killed before answering.
    JudgeResult.objects.create(setting=setting, response=item.response, cache_key=key, run=run,
                               claim_owner=claims.owner_tag(run.pk, run.epoch, "task-a"))
    report = services.process_judge_chunk(run.pk, run.epoch, [item.pk], task_id="task-a")
    assert report.recorded == 1
    result = JudgeResult.objects.get()
    assert result.status == "ok" and llm_server.request_count == 1


def test_live_claim_of_a_sibling_task_is_waited_for(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    from grading.models import JudgeRunItem

    setting = make_setting(endpoint)
    with django_capture_on_commit_callbacks(execute=False):
        run = services.start_judge_run(setting)
    item = run.items.first()
    key = _key_of(setting, item)
    from django.utils import timezone

    claim = JudgeResult.objects.create(setting=setting, response=item.response, cache_key=key, run=run,
                                       claim_owner=claims.owner_tag(run.pk, run.epoch, "task-other"),
                                       claimed_at=timezone.now())
    assert not services.may_take_over(claim.claim_owner, claim.claimed_at, run_id=run.pk, epoch=run.epoch,
                                      task_id="task-mine", lease=claims.lease_for(endpoint))
    # The sibling finishes while we wait: we link its answer and call nothing.
    JudgeResult.objects.filter(pk=claim.pk).update(status="ok", score=3)
    services.process_judge_chunk(run.pk, run.epoch, [item.pk], task_id="task-mine")
    assert llm_server.request_count == 0
    assert JudgeRunItem.objects.get(pk=item.pk).result_id == claim.pk


def _answers_asked(server):
    """Distinct prompts the server saw: a client retry after a timeout on a busy machine is not a new call."""
    return len({record.text for record in list(server.requests)})


def test_cancel_and_resume(endpoint, llm_server, rubric_question, django_capture_on_commit_callbacks):
    make_responses(rubric_question, 10)
    llm_server.default = score_by_answer({})
    setting = make_setting(endpoint)
    with django_capture_on_commit_callbacks(execute=False):
        run = services.start_judge_run(setting, chunk_size=5)
    ids = list(run.items.order_by("id").values_list("pk", flat=True))
    services.process_judge_chunk(run.pk, run.epoch, ids[:5], task_id="t1")
    services.cancel_judge_run(run)
    report = services.process_judge_chunk(run.pk, run.epoch, ids[5:], task_id="t2")
    assert report.skipped == 5 and _answers_asked(llm_server) == 5
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.CANCELLED
    with django_capture_on_commit_callbacks(execute=True):
        services.resume_judge_run(run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE and run.epoch == 2
    assert _answers_asked(llm_server) == 10 and JudgeResult.objects.count() == 10
    # A chunk of the old epoch delivered late does nothing.
    assert services.process_judge_chunk(run.pk, 1, ids, task_id="late").skipped == 10
