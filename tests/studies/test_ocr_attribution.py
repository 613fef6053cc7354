"""OCR-vs-judge attribution: the tag rule, raw OCR text of scanned answers, the command, and the
disagreement queue's column and filter (page and API, query counts flat)."""
import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Response, content_hash
from grading.judges import services as judge_services
from ocr.models import OcrRun, Page, ScanBatch, ScanFile, Transcript
from studies import selectors
from studies.selectors import attribution_tag
from tests.conftest import api_client_for
from tests.factories import make_question, make_setting
from tests.llm_server import Reply

from .helpers import answer_of

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("d_fix,d_raw,tag", [
    (0, 0, ""), (1.5, 1.9, ""),  # no disagreement on either text
    (0, 2, "ocr"), (1, 5, "ocr"),  # the verified text fixes it
    (3, 3, "judge"), (3, 0, "judge"), (3, 3.5, "judge"),  # the raw text does not make it worse
    (3, 4, "both"), (2, 6, "both"),  # wrong on the verified text, worse on the raw
])
def test_attribution_tag(d_fix, d_raw, tag):
    assert attribution_tag(d_fix, d_raw, 2) == tag


def test_threshold_is_configurable():
    assert attribution_tag(0, 2, threshold=3) == ""
    assert attribution_tag(0, 3, threshold=3) == "ocr"


def score_in_text(payload):
    """A judge that gives the score written as SCORE<n> in the answer (made-up, for attribution)."""
    match = re.search(r"SCORE(\d+)", answer_of(payload))
    return Reply(f"Overall Score: {match.group(1) if match else 0}")


def scanned(question, student, verified, raw, gold, pages=1):
    """A response made from `pages` scanned pages: raw OCR text and verified text per page."""
    response = Response.objects.create(question=question, student_id=student, transcript=verified,
                                       transcript_hash=content_hash(verified), gold_score=gold,
                                       extra={"origin": "scan"})
    batch = ScanBatch.objects.create(name=f"batch {student}", exam=question.exam, engine="fake")
    scan = ScanFile.objects.create(batch=batch, original_name=f"{student}.png", status="accepted")
    for number in range(1, pages + 1):
        page = Page.objects.create(batch=batch, source_file=scan, student_id=student, question=question,
                                   page_number=number, width=10, height=10, response=response)
        part_raw = raw if pages == 1 else f"{raw} p{number}"
        run = OcrRun.objects.create(page=page, engine="fake", status="done", raw_text=part_raw)
        Transcript.objects.create(page=page, text=verified, verified_text=verified, status="verified", source_run=run)
    return response


@pytest.fixture
def cases(db):
    question = make_question(full_score=10)
    made = {
        "ocr": scanned(question, "s-ocr", "Work SCORE8", "Wrk SCORE3", 8),
        "judge": scanned(question, "s-judge", "Work SCORE4", "Wrk SCORE4", 8),
        "both": scanned(question, "s-both", "Work SCORE5", "Wrk SCORE2", 8),
        "none": scanned(question, "s-none", "Work SCORE8", "Wrk SCORE8", 8),
    }
    typed = "Typed SCORE1"
    made["typed"] = Response.objects.create(question=question, student_id="typed", transcript=typed,
                                            transcript_hash=content_hash(typed), gold_score=8)
    return made


def test_raw_ocr_texts_join_pages_like_the_verified_text(db):
    question = make_question()
    response = scanned(question, "two-pages", "verified", "raw", 5, pages=2)
    typed = Response.objects.create(question=question, student_id="t", transcript="x", transcript_hash=content_hash("x"))
    assert selectors.raw_ocr_texts([response.pk, typed.pk]) == {response.pk: "raw p1\n\nraw p2"}


def test_command_tags_each_disagreement(cases, endpoint, llm_server):
    llm_server.default = score_in_text
    make_setting(endpoint, name="attr")
    out, err = StringIO(), StringIO()
    call_command("ocr_attribution", "--setting", "attr", "--inline", "--format", "jsonl", stdout=out, stderr=err)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    tags = {row["student_id"]: row["tag"] for row in rows}
    assert tags == {"s-ocr": "ocr", "s-judge": "judge", "s-both": "both"}
    both = next(r for r in rows if r["tag"] == "both")
    assert (both["score_verified"], both["score_raw_ocr"], both["gold"]) == (5, 2, 8)
    assert "1 not from scans" in err.getvalue()
    out = StringIO()
    call_command("ocr_attribution", "--setting", "attr", "--threshold", "4", "--inline", stdout=out, stderr=StringIO())
    assert {json.loads(line)["student_id"] for line in out.getvalue().splitlines()} == {"s-ocr", "s-judge", "s-both"}


def queue_with_attribution(cases, endpoint, llm_server):
    llm_server.default = score_in_text
    setting = make_setting(endpoint, name="attr")
    judge_services.run_inline(judge_services.start_judge_run(setting, enqueue=False))
    call_command("ocr_attribution", "--setting", "attr", "--inline", stdout=StringIO(), stderr=StringIO())
    return setting


def test_queue_page_shows_and_filters_the_attribution(cases, endpoint, llm_server, reviewer_client):
    setting = queue_with_attribution(cases, endpoint, llm_server)
    url = reverse("grading:review_disagreements")
    page = reviewer_client.get(url, {"setting": setting.pk}).content.decode()
    assert "OCR attribution" in page
    assert 'class="tag tag-judge"' in page and 'class="tag tag-both"' in page
    page = reviewer_client.get(url, {"setting": setting.pk, "attribution": "both"}).content.decode()
    assert f"response #{cases['both'].pk}<" in page and f"response #{cases['judge'].pk}<" not in page
    page = reviewer_client.get(url, {"setting": setting.pk, "attribution": "none"}).content.decode()
    assert f"response #{cases['typed'].pk}<" in page and f"response #{cases['both'].pk}<" not in page


def test_queue_api_has_the_attribution(cases, endpoint, llm_server, reviewer):
    setting = queue_with_attribution(cases, endpoint, llm_server)
    api = api_client_for(reviewer)
    data = api.get(reverse("api-review-disagreements"), {"setting": setting.pk}).json()
    rows = data["results"] if isinstance(data, dict) else data
    tags = {row["student_id"]: (row["ocr_attribution"], row["ocr_raw_score"]) for row in rows}
    assert tags == {"s-judge": ("judge", 4.0), "s-both": ("both", 2.0), "typed": ("", None)}
    data = api.get(reverse("api-review-disagreements"), {"setting": setting.pk, "attribution": "judge"}).json()
    rows = data["results"] if isinstance(data, dict) else data
    assert [row["student_id"] for row in rows] == ["s-judge"]


def test_queue_query_count_stays_flat(cases, endpoint, llm_server, reviewer_client, django_assert_max_num_queries):
    setting = queue_with_attribution(cases, endpoint, llm_server)
    url = reverse("grading:review_disagreements")
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as few:
        reviewer_client.get(url, {"setting": setting.pk})
    question = cases["both"].question
    for i in range(6):
        scanned(question, f"more-{i}", f"More SCORE{i % 3}", f"Mre SCORE{i % 2}", 9)
    judge_services.run_inline(judge_services.start_judge_run(setting, enqueue=False))
    call_command("ocr_attribution", "--setting", "attr", "--inline", stdout=StringIO(), stderr=StringIO())
    with django_assert_max_num_queries(len(few.captured_queries)):
        reviewer_client.get(url, {"setting": setting.pk})
