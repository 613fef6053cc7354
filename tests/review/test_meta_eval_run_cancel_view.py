"""Cancelling a meta-evaluation run (META_EVAL_RUN_ACTIONS.cancel,
/grading/review/meta-eval-runs/<pk>/cancel/): POST only, reviewers only; no call goes out after;
back to the disagreement queue or a local `next`; an unknown id is a 404."""
import pytest
from django.urls import reverse

from grading.models import MetaEvalRun
from grading.review import selectors as sel
from grading.review import services

from ..conftest import assert_post_refused
from .test_meta_evaluator import llm_server, server, setup  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(setup, django_capture_on_commit_callbacks):  # noqa: F811
    with django_capture_on_commit_callbacks(execute=False):
        return services.start_meta_eval_run(endpoint=setup["endpoint"], model="m",
                                            scope=sel.Scope(setting=setup["config"]), threshold=2)


def test_a_reviewer_cancels_and_nothing_more_is_asked(reviewer_client, run, server):  # noqa: F811
    answer = reviewer_client.post(reverse("grading:review_meta_eval_run_cancel", args=[run.pk]),
                                  {"next": "/grading/review/categories/"})
    assert answer.status_code == 302 and answer["Location"] == "/grading/review/categories/"
    run.refresh_from_db()
    assert run.status == MetaEvalRun.Status.CANCELLED
    services.process_meta_eval_chunk(run.pk, run.epoch, run.result_ids, task_id="late")  # a chunk queued before
    assert server.request_count == 0 and not run.proposals.exists()


def test_refused_writes_leave_the_run_running(annotator, reviewer, run):
    url = reverse("grading:review_meta_eval_run_cancel", args=[run.pk])
    assert_post_refused(url, annotator, reviewer)
    run.refresh_from_db()
    assert run.status == MetaEvalRun.Status.RUNNING


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/grading/review/meta-eval-runs/{pk}/cancel/").status_code == 404
