"""A probe run's page (grading.studies.views.probe_run_detail, /grading/studies/probes/runs/<pk>/): rates with intervals and its items; reviewers only."""
import pytest
from django.urls import reverse

from tests.factories import make_question, make_setting

from ..conftest import assert_reviewer_only
from .helpers import FAIR, finished_run, make_answers

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(endpoint, llm_server):
    llm_server.default = FAIR
    make_answers(make_question(), 3)
    return finished_run(make_setting(endpoint))


def test_roles(annotator, reviewer, run):
    assert assert_reviewer_only(reverse("grading:studies_probe_run", args=[run.pk]), annotator, reviewer).status_code == 200


def test_rates_and_items(reviewer_client, run):
    page = reviewer_client.get(reverse("grading:studies_probe_run", args=[run.pk])).content.decode()
    assert 'data-probe="drop-final-answer"' in page and "1.000" in page and "Wilson" in page
    assert page.count("item #") == run.n_items
    filtered = reviewer_client.get(reverse("grading:studies_probe_run", args=[run.pk]), {"probe": "notation-swap"})
    assert filtered.content.decode().count("item #") == 3


def test_unknown_run_is_404(reviewer_client):
    assert reviewer_client.get(reverse("grading:studies_probe_run", args=[999999])).status_code == 404


def test_a_raw_ocr_run_shows_the_attribution(reviewer_client, endpoint, llm_server):
    from grading.studies import services
    from tests.studies.test_ocr_attribution import scanned, score_in_text

    llm_server.default = score_in_text
    question = make_question()
    scanned(question, "s-ocr", "Work SCORE8", "Wrk SCORE3", 8)
    scanned(question, "s-both", "Work SCORE5", "Wrk SCORE2", 8)
    run = services.run_inline(services.start_probe_run(make_setting(endpoint), probe_names=["raw-ocr"], enqueue=False))
    url = reverse("grading:studies_probe_run", args=[run.pk])
    page = reviewer_client.get(url).content.decode()
    assert 'id="attribution-table"' in page and page.count('<span class="tag tag-ocr">ocr</span>') == 2
    assert 'id="probe-rates"' not in page  # raw OCR is not a probe: no detection rate
    page = reviewer_client.get(url, {"threshold": "7"}).content.decode()
    assert "No scanned answer" in page
