"""One probe item (studies.views.probe_item_detail, /grading/studies/probes/items/<pk>/): a diff of original and derived text with both judge outputs, text escaped."""
import pytest
from django.urls import reverse

from tests.factories import make_question, make_setting

from ..conftest import assert_reviewer_only
from .helpers import FAIR, finished_run, make_answers

pytestmark = pytest.mark.django_db


@pytest.fixture
def item(endpoint, llm_server):
    llm_server.default = FAIR
    make_answers(make_question(), 1)
    return finished_run(make_setting(endpoint), ["drop-final-answer"]).items.get()


def test_roles(annotator, reviewer, item):
    assert assert_reviewer_only(reverse("studies:probe_item", args=[item.pk]), annotator, reviewer).status_code == 200


def test_diff_and_both_outputs(reviewer_client, item):
    page = reviewer_client.get(reverse("studies:probe_item", args=[item.pk])).content.decode()
    assert 'class="diff-delete"' in page and "Answer: $\\boxed{1}$" in page
    assert 'id="original-output"' in page and "Overall Score: 8" in page and "Overall Score: 3" in page
    assert 'id="detected">detected' in page
    assert "<b>bold?</b>" not in page and "&lt;b&gt;bold?&lt;/b&gt;" in page  # student text escaped
    assert 'class="math prose transcript" id="derived-text"' in page  # rendered by RealMath.renderMath


def test_a_raw_ocr_item_names_its_texts(reviewer_client, endpoint, llm_server):
    from studies import services
    from tests.studies.test_ocr_attribution import scanned, score_in_text

    llm_server.default = score_in_text
    scanned(make_question(), "s-ocr", "Work SCORE8", "Wrk SCORE3", 8)
    run = services.run_inline(services.start_probe_run(make_setting(endpoint), probe_names=["raw-ocr"], enqueue=False))
    page = reviewer_client.get(reverse("studies:probe_item", args=[run.items.get().pk])).content.decode()
    assert "Raw OCR text" in page and "Verified transcript" in page and "Wrk SCORE3" in page
    assert 'id="detected"' not in page  # not a probe: no detection verdict
