"""Resuming a meta-evaluation run (META_EVAL_RUN_ACTIONS.resume,
/grading/review/meta-eval-runs/<pk>/resume/): POST only, reviewers only; a cancelled run asks
again about every case without an answer; a run still making progress is refused; an unknown id
is a 404."""
import pytest
from django.urls import reverse

from grading.models import MetaEvalRun
from grading.review import selectors as sel
from grading.review import services
from tests.llm_server import Reply

from ..conftest import assert_post_refused
from .test_meta_evaluator import _answer, llm_server, server, setup  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(setup, django_capture_on_commit_callbacks):  # noqa: F811
    with django_capture_on_commit_callbacks(execute=False):
        return services.start_meta_eval_run(endpoint=setup["endpoint"], model="m",
                                            scope=sel.Scope(setting=setup["config"]), threshold=2)


def test_a_cancelled_run_is_resumed_and_finishes(reviewer_client, run, server,  # noqa: F811
                                                 django_capture_on_commit_callbacks):
    server.default = Reply(_answer("A", "Gold is off."))
    reviewer_client.post(reverse("grading:review_meta_eval_run_cancel", args=[run.pk]))
    with django_capture_on_commit_callbacks(execute=True):
        answer = reviewer_client.post(reverse("grading:review_meta_eval_run_resume", args=[run.pk]))
    assert answer.status_code == 302 and answer["Location"] == reverse("grading:review_disagreements")
    run.refresh_from_db()
    assert run.status == MetaEvalRun.Status.DONE and run.epoch == 2
    assert run.proposals.count() == 4 and server.request_count == 4


def test_a_run_making_progress_is_not_resumed(reviewer_client, run):
    answer = reviewer_client.post(reverse("grading:review_meta_eval_run_resume", args=[run.pk]), follow=True)
    assert "still making progress" in answer.content.decode()
    run.refresh_from_db()
    assert run.epoch == 1 and run.status == MetaEvalRun.Status.RUNNING


def test_refused_writes_change_nothing(annotator, reviewer, run):
    services.cancel_meta_eval_run(run)
    url = reverse("grading:review_meta_eval_run_resume", args=[run.pk])
    assert_post_refused(url, annotator, reviewer)
    run.refresh_from_db()
    assert run.epoch == 1 and run.status == MetaEvalRun.Status.CANCELLED


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/grading/review/meta-eval-runs/{pk}/resume/").status_code == 404
