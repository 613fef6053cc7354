"""A meta-evaluation run's progress JSON (META_EVAL_RUN_ACTIONS.progress,
/grading/review/meta-eval-runs/<pk>/progress.json): proposals counted as the model answers;
reviewers only; an unknown id is a 404."""
import pytest
from django.urls import reverse

from grading.review import selectors as sel
from grading.review import services
from tests.conftest import assert_reviewer_only
from tests.llm_server import Reply

from .test_meta_evaluator import _answer, llm_server, server, setup  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def _start(setup, execute, capture):  # noqa: F811
    with capture(execute=execute):
        return services.start_meta_eval_run(endpoint=setup["endpoint"], model="meta-m",
                                            scope=sel.Scope(setting=setup["config"]), threshold=2)


def test_reviewers_only_and_a_queued_run_has_done_nothing(annotator, reviewer, setup, server,  # noqa: F811
                                                          django_capture_on_commit_callbacks):
    run = _start(setup, False, django_capture_on_commit_callbacks)
    progress = assert_reviewer_only(reverse("grading:review_meta_eval_run_progress", args=[run.pk]),
                                    annotator, reviewer).json()
    assert (progress["id"], progress["status"], progress["model"]) == (run.pk, "running", "meta-m")
    assert (progress["n_items"], progress["done"], progress["ok"]) == (4, 0, 0)
    assert not progress["can_resume"] and server.request_count == 0


def test_a_finished_run_counts_each_answer_by_status(reviewer_client, setup, server,  # noqa: F811
                                                     django_capture_on_commit_callbacks):
    server.default = Reply(_answer("A", "Gold is off."))
    server.script("Answer 701", Reply("not json at all"), Reply("still not json"))
    run = _start(setup, True, django_capture_on_commit_callbacks)
    progress = reviewer_client.get(reverse("grading:review_meta_eval_run_progress", args=[run.pk])).json()
    assert progress["status"] == "done" and progress["done"] == 4
    assert progress["ok"] + progress["invalid"] == 4 and progress["invalid"] >= 1


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/grading/review/meta-eval-runs/{pk}/progress.json").status_code == 404
