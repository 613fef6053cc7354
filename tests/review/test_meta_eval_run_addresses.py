"""One name for the meta-evaluation run: the pages and the API under meta-eval-runs/, the old
prelabel addresses still answering (pages: 308 so a posted form is posted again; API: an alias
out of the schema), and the same progress/cancel/resume actions as the other runs."""
import pytest
from django.test import Client
from django.urls import reverse

from grading.models import MetaEvalRun
from grading.review import selectors as sel
from grading.review import services
from tests.llm_server import Reply

from .test_meta_evaluator import _answer, llm_server, server, setup  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(setup, server, django_capture_on_commit_callbacks):  # noqa: F811
    server.default = Reply(_answer("A", "Gold is off."))
    with django_capture_on_commit_callbacks(execute=False):
        return services.start_meta_eval_run(endpoint=setup["endpoint"], model="m",
                                            scope=sel.Scope(setting=setup["config"]), threshold=2)


def test_old_page_addresses_answer_308_to_the_new_ones(run, reviewer_client):
    for old, name in ((f"/grading/review/prelabel/{run.pk}/cancel/", "grading:review_meta_eval_run_cancel"),
                      (f"/grading/review/prelabel/{run.pk}/resume/", "grading:review_meta_eval_run_resume")):
        answer = reviewer_client.post(old, {"next": "/grading/review/disagreements/"})
        assert answer.status_code == 308
        assert answer["Location"] == reverse(name, args=[run.pk])
    answer = reviewer_client.post("/grading/review/prelabel/?x=1")
    assert (answer.status_code, answer["Location"]) == (308, reverse("grading:review_meta_eval_run_start") + "?x=1")
    followed = reviewer_client.post(f"/grading/review/prelabel/{run.pk}/cancel/", follow=True)
    run.refresh_from_db()
    assert followed.status_code == 200 and run.status == MetaEvalRun.Status.CANCELLED


def test_progress_page_and_api_alias(run, reviewer_client, annotator):
    progress = reviewer_client.get(reverse("grading:review_meta_eval_run_progress", args=[run.pk])).json()
    assert progress["id"] == run.pk and progress["status"] == "running"
    other = Client()
    other.force_login(annotator)
    assert other.get(reverse("grading:review_meta_eval_run_progress", args=[run.pk])).status_code == 403
    new = reviewer_client.get(f"/api/review/meta-eval-runs/{run.pk}/").json()
    old = reviewer_client.get(f"/api/review/prelabel-runs/{run.pk}/").json()
    assert new == old and new["n_items"] == run.n_items
    assert reviewer_client.get(f"/api/review/meta-eval-runs/{run.pk}/progress/").json()["id"] == run.pk
    assert reviewer_client.get("/api/review/meta-eval-runs/abc/").status_code == 404
    schema = reviewer_client.get("/api/schema/").content.decode()
    assert "/api/review/meta-eval-runs/" in schema and "prelabel-runs" not in schema


def test_cancel_from_the_page_goes_back_to_a_safe_next(run, reviewer_client):
    url = reverse("grading:review_meta_eval_run_cancel", args=[run.pk])
    answer = reviewer_client.post(url, {"next": "https://evil.example/"})
    assert answer["Location"] == reverse("grading:review_disagreements")
    run.refresh_from_db()
    assert run.status == MetaEvalRun.Status.CANCELLED
