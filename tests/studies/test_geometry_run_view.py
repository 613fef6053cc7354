"""A geometry run's page: progress JSON, figures and their JSON, the segments in the paper's
JSONL shape, cancel and resume (POST, reviewers only); student text is escaped."""
import json

import pytest
from django.test import Client
from django.urls import reverse

from grading.studies.geometry import services
from grading.studies.geometry.models import GeometryRun

from .helpers import lexical_geometry_run

pytestmark = pytest.mark.django_db


def lexical_run(text="<b>bold</b> answer"):
    return lexical_geometry_run(text)


def test_run_page_shows_figures_labelled_and_escaped(reviewer_client, annotator):
    run = lexical_run()
    url = reverse("grading:studies_geometry_run", args=[run.pk])
    other = Client()
    other.force_login(annotator)
    assert other.get(url).status_code == 403 and Client().get(url).status_code == 302
    page = reviewer_client.get(url).content.decode()
    assert 'id="geometry-data"' in page and 'id="fig-density"' in page and 'class="heatmap"' in page
    assert 'id="fig-bic"' not in page  # a run without clusters has no silhouette or BIC figure
    assert "Lexical baseline, not semantic" in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold</b>" not in page
    assert 'style="' not in page.split('id="geometry-progress"')[1].split("</section>")[0]


def test_results_json_and_segments_jsonl(reviewer_client):
    run = lexical_run()
    results = json.loads(reviewer_client.get(reverse("grading:studies_geometry_run_results", args=[run.pk])).content)
    assert results == run.results and results["study"] == "error_geometry"
    body = reviewer_client.get(reverse("grading:studies_geometry_run_segments", args=[run.pk])).content.decode()
    records = [json.loads(line) for line in body.splitlines()]
    assert len(records) == 16 and records[0]["analysis_subset"] == "human" and records[0]["sub_id"] == "(2)"


def test_progress_json(reviewer_client):
    run = lexical_run()
    progress = reviewer_client.get(reverse("grading:studies_geometry_run_progress", args=[run.pk])).json()
    assert progress["finished"] and progress["analysis"] == "done" and progress["total"] == 16


def test_cancel_then_resume(reviewer_client, annotator, endpoint, llm_server, django_capture_on_commit_callbacks):
    lines = [json.dumps({"segment_text": f"text {i}", "sample_id": str(i), "question": "Q", "sub_id": "", "real_score": 0,
                         "max_score": 1, "analysis_subset": "human"}) for i in range(3)]
    run = services.start_run(backend="served", endpoint=endpoint, model="m", segments=services.parse_segments_jsonl(
        "\n".join(lines)), bootstrap=0, cluster=False, enqueue=False)
    cancel = reverse("grading:studies_geometry_run_cancel", args=[run.pk])
    resume = reverse("grading:studies_geometry_run_resume", args=[run.pk])
    other = Client()
    other.force_login(annotator)
    assert other.post(cancel).status_code == 403 and reviewer_client.get(cancel).status_code == 405
    reviewer_client.post(cancel)
    run.refresh_from_db()
    assert run.status == GeometryRun.Status.CANCELLED
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(resume)
    run.refresh_from_db()
    assert run.status == "done" and run.epoch == 2 and run.analysis_state == "done", run.analysis_error


def test_an_analysis_whose_worker_died_is_offered_again(reviewer_client, django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    run = lexical_run()
    GeometryRun.objects.filter(pk=run.pk).update(analysis_state="running", results={},
                                                 finished=timezone.now() - timedelta(hours=1))
    progress = reviewer_client.get(reverse("grading:studies_geometry_run_progress", args=[run.pk])).json()
    assert progress["can_resume"] and progress["stalled"]
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(reverse("grading:studies_geometry_run_resume", args=[run.pk]))
    run.refresh_from_db()
    assert run.analysis_state == "done" and run.results["study"] == "error_geometry"
