"""A geometry run's page (studies.geometry.views.geometry_run): its figures, labelled,
student text escaped; reviewers only. Its progress, results, segments, cancel and resume have a
file each (test_geometry_run_<action>_view.py)."""

import pytest
from django.test import Client
from django.urls import reverse

from .helpers import lexical_geometry_run

pytestmark = pytest.mark.django_db


def lexical_run(text="<b>bold</b> answer"):
    return lexical_geometry_run(text)


def test_run_page_shows_figures_labelled_and_escaped(reviewer_client, annotator):
    run = lexical_run()
    url = reverse("studies:geometry_run", args=[run.pk])
    other = Client()
    other.force_login(annotator)
    assert other.get(url).status_code == 403 and Client().get(url).status_code == 302
    page = reviewer_client.get(url).content.decode()
    assert 'id="geometry-data"' in page and 'id="fig-density"' in page and 'class="heatmap"' in page
    assert 'id="fig-bic"' not in page  # a run without clusters has no silhouette or BIC figure
    assert "Lexical baseline, not semantic" in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold</b>" not in page
    assert 'style="' not in page.split('id="geometry-progress"')[1].split("</section>")[0]


def test_geometry_runs_api(annotator, reviewer, django_capture_on_commit_callbacks):
    from tests.conftest import api_client_for

    run = lexical_run()
    assert api_client_for(annotator).get("/api/geometry-runs/").status_code == 403
    api = api_client_for(reviewer)
    assert [row["id"] for row in api.get("/api/geometry-runs/").json()["results"]] == [run.pk]
    assert api.get(f"/api/geometry-runs/{run.pk}/").json()["results"]["study"] == "error_geometry"
    progress = api.get(f"/api/geometry-runs/{run.pk}/progress/").json()
    assert progress["analysis"] == "done" and progress["can_cancel"] is False
    assert api.post(f"/api/geometry-runs/{run.pk}/resume/").status_code == 409  # nothing to resume
    assert api.post(f"/api/geometry-runs/{run.pk}/cancel/").json()["status"] == "done"  # nothing to stop


def test_labels_read_with_the_languages_colon(reviewer_client, reviewer):
    """"analysis: done", "Selection: {...}" in English; "分析：", "选择：" in Chinese (issue 39)."""
    from accounts.services import set_user_language

    url = reverse("studies:geometry_run", args=[lexical_run().pk])
    page = reviewer_client.get(url).content.decode()
    assert 'analysis: <span id="g-analysis">' in page and 'Selection: <span class="mono">' in page
    set_user_language(reviewer, "zh-hans")
    page = reviewer_client.get(url).content.decode()
    assert '分析：<span id="g-analysis">' in page and '选择：<span class="mono">' in page
