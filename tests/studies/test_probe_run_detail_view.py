"""A probe run's page (studies.views.probe_run_detail, /grading/studies/probes/runs/<pk>/): rates with intervals and its items; reviewers only."""
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
    assert assert_reviewer_only(reverse("studies:probe_run", args=[run.pk]), annotator, reviewer).status_code == 200


def test_rates_and_items(reviewer_client, run):
    page = reviewer_client.get(reverse("studies:probe_run", args=[run.pk])).content.decode()
    assert 'data-probe="drop-final-answer"' in page and "1.000" in page and "Wilson" in page
    assert page.count("item #") == run.n_items
    filtered = reviewer_client.get(reverse("studies:probe_run", args=[run.pk]), {"probe": "notation-swap"})
    assert filtered.content.decode().count("item #") == 3


def test_unknown_run_is_404(reviewer_client):
    assert reviewer_client.get(reverse("studies:probe_run", args=[999999])).status_code == 404


def test_a_raw_ocr_run_shows_the_attribution(reviewer_client, endpoint, llm_server):
    from studies import services
    from tests.studies.test_ocr_attribution import scanned, score_in_text

    llm_server.default = score_in_text
    question = make_question()
    scanned(question, "s-ocr", "Work SCORE8", "Wrk SCORE3", 8)
    scanned(question, "s-both", "Work SCORE5", "Wrk SCORE2", 8)
    run = services.run_inline(services.start_probe_run(make_setting(endpoint), probe_names=["raw-ocr"], enqueue=False))
    url = reverse("studies:probe_run", args=[run.pk])
    page = reviewer_client.get(url).content.decode()
    assert 'id="attribution-table"' in page and page.count('<span class="tag tag-ocr">ocr</span>') == 2
    assert 'id="probe-rates"' not in page  # raw OCR is not a probe: no detection rate
    page = reviewer_client.get(url, {"threshold": "7"}).content.decode()
    assert "No scanned answer" in page


def test_a_style_run_header_agrees_with_its_table_and_shows_the_second_analysis(reviewer_client, endpoint, llm_server):
    """Issue 34: "Judged N" in the header is every rewrite judged; the report says where each of them went
    (the table, the second analysis of flagged ones, or no gold score), so the two counts add up."""
    from decimal import Decimal

    from annotation.models import Response, content_hash
    from studies import services, style

    question = make_question("Style header problem.", full_score=10, location="H-1")
    answers = []
    for i in range(5):
        text = f"first we compute 2+2=4\nthen x=4-1\nso the answer is $x=3$\n(answer {i})"
        answers.append(Response.objects.create(question=question, student_id=f"h-{i}", transcript=text,
                                               transcript_hash=content_hash(text), gold_score=Decimal(5)))
    rows = [{"response_id": a.pk, "rewritten": a.transcript.replace("first we", "First, we")} for a in answers]
    rows[0]["rewritten"] = "one line, so the answer is $x=9$"  # flagged
    style.import_rewrites(__import__("json").dumps(rows).encode(), "rw.json")
    Response.objects.filter(pk=answers[1].pk).update(gold_score=None)
    llm_server.default = FAIR
    run = services.run_inline(services.start_probe_run(make_setting(endpoint), probe_names=[style.PROBE],
                                                       enqueue=False, include_flagged=True))
    page = reviewer_client.get(reverse("studies:probe_run", args=[run.pk])).content.decode()
    assert '<span id="p-ok">5</span>' in page
    assert ("5 rewrites judged with their originals: 3 in the table below, 1 flagged ones only in the second analysis, "
            "1 without a gold score (left out).") in page
    assert 'id="style-table"' in page and 'id="style-with-flagged"' in page and 'id="style-table-with-flagged"' in page
    reviewer_client.cookies["django_language"] = "zh-hans"
    page = reviewer_client.get(reverse("studies:probe_run", args=[run.pk])).content.decode()
    assert "5 份改写与其原作答一起评判：3 份在下表中，1 份被标记的只在第二项分析中，1 份没有金标准分（略去）。" in page
    assert "第二项分析：纳入被标记的改写" in page and "此表中有 1 份改写被标记" in page
