"""The correction screen: image, escaped transcript, editor settings, neighbours."""
import json

import pytest
from django.urls import reverse

from ocr import services
from ocr.models import OcrRun, Transcript

from ..conftest import assert_reviewer_only
from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def test_reviewer_only(annotator, reviewer, make_batch):
    _, pages = pages_without_ocr(make_batch, 1)
    response = assert_reviewer_only(reverse("ocr:page_correct", args=[pages[0].pk]), annotator, reviewer)
    assert response.status_code == 200


def editor_config(response):
    body = response.content.decode()
    start = body.index('<script id="editor-config" type="application/json">') + len(
        '<script id="editor-config" type="application/json">')
    return json.loads(body[start : body.index("</script>", start)])


def test_student_text_is_escaped_in_the_editor_and_its_settings(reviewer_client, make_batch):
    _, pages = pages_without_ocr(make_batch, 1)
    page = pages[0]
    hostile = '</textarea><script>alert(1)</script> $\\href{javascript:alert(1)}{x}$'
    run = page.ocr_runs.get()
    OcrRun.objects.filter(pk=run.pk).update(raw_text=hostile, tokens=[{"o": 0, "n": 3, "c": 0.2, "b": [1, 2, 3, 4]}])
    Transcript.objects.filter(page=page).update(text=hostile)
    response = reviewer_client.get(reverse("ocr:page_correct", args=[page.pk]))
    body = response.content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;/textarea&gt;&lt;script&gt;" in body
    config = editor_config(response)
    assert config["rawText"] == hostile and config["tokens"][0]["c"] == 0.2
    assert config["version"] == 1 and config["saveUrl"] == reverse("ocr-api-page-transcript", args=[page.pk])


def test_screen_links_neighbours_and_lists_shortcuts(reviewer_client, make_batch):
    _, pages = pages_without_ocr(make_batch, 3)
    response = reviewer_client.get(reverse("ocr:page_correct", args=[pages[1].pk]))
    config = editor_config(response)
    assert config["previousUrl"] == reverse("ocr:page_correct", args=[pages[0].pk])
    assert config["nextUrl"] == reverse("ocr:page_correct", args=[pages[2].pk])
    body = response.content.decode()
    assert "page 2 of 3" in body
    for shortcut in ("<kbd>Ctrl</kbd>+<kbd>S</kbd>", "<kbd>Ctrl</kbd>+<kbd>Enter</kbd>", "<kbd>Alt</kbd>+<kbd>L</kbd>"):
        assert shortcut in body
    first = editor_config(reviewer_client.get(reverse("ocr:page_correct", args=[pages[0].pk])))
    assert first["previousUrl"] is None


def test_unassigned_page_cannot_be_verified_from_the_screen(reviewer_client, make_batch):
    _, pages = pages_without_ocr(make_batch, 1, question="9-99")
    body = reviewer_client.get(reverse("ocr:page_correct", args=[pages[0].pk])).content.decode()
    assert "no question yet" in body
    assert 'id="verify-button" class="primary" title="Mark verified (Ctrl+Enter)" disabled' in body


def test_page_waiting_for_ocr_says_so(reviewer_client, make_batch):
    batch, pages = pages_without_ocr(make_batch, 1)
    OcrRun.objects.filter(page=pages[0]).update(status="queued")
    Transcript.objects.filter(page=pages[0]).delete()
    response = reviewer_client.get(reverse("ocr:page_correct", args=[pages[0].pk]))
    assert "this screen reloads when OCR is done" in response.content.decode()
    assert editor_config(response)["ocrPending"] is True


def test_missing_page_is_404(reviewer_client, db):
    assert reviewer_client.get(reverse("ocr:page_correct", args=[999999])).status_code == 404


def test_verified_page_links_its_response(reviewer_client, make_batch, reviewer):
    _, pages = pages_without_ocr(make_batch, 1)
    _, response = services.verify_transcript(pages[0], text="final", base_version=1, user=reviewer)
    body = reviewer_client.get(reverse("ocr:page_correct", args=[pages[0].pk])).content.decode()
    assert reverse("annotation:response_detail", args=[response.pk]) in body
    detail = reviewer_client.get(reverse("annotation:response_detail", args=[response.pk])).content.decode()
    assert reverse("ocr:page_correct", args=[pages[0].pk]) in detail


def test_the_page_number_is_the_answers_not_the_batchs(reviewer_client, make_batch):
    """Issue 39: a batch of 4 pages, two answers of 2 pages: the last page is "page 2 of 2 of
    this answer" (it said "page 4 of 8" as if the batch were the answer)."""
    from ocr.models import Page

    from .conftest import distinct_image, png_bytes

    files = [(f"{student}_3-17_{n}.png", png_bytes(distinct_image(i)))
             for i, (student, n) in enumerate([("a", 1), ("a", 2), ("b", 1), ("b", 2)])]
    batch, _ = make_batch(files)
    last = Page.objects.get(batch=batch, student_id="b", page_number=2)
    body = reviewer_client.get(reverse("ocr:page_correct", args=[last.pk])).content.decode()
    assert "page 2 of 2 of this answer" in body
    assert "page 4 of 4 in this batch" in body
    assert "page 4 of 4<" not in body
