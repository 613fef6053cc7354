"""The scan beside every label: page images of a response on the labelling and adjudication
screens, for the people allowed to label it, with OCR word boxes in transcript offsets."""
import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.labelling import services as labelling
from annotation.models import Response
from ocr import selectors, services
from ocr.models import OcrRun, Page

from ..conftest import make_user
from .conftest import distinct_image, png_bytes

pytestmark = pytest.mark.django_db

# What the engine read on each page, with a box per word, and what the corrector made of it.
RAW = ["x2 + 1 = 5", "so x = 2"]
CORRECTED = ["$x^2$ + 1 = 5", "so $x = 2$"]


def boxed_tokens(raw):
    tokens, at = [], 0
    for n, word in enumerate(raw.split(" ")):
        at = raw.index(word, at)
        tokens.append({"o": at, "n": len(word), "c": 0.9, "b": [10 + 30 * n, 20, 30 + 30 * n, 40]})
        at += len(word)
    return tokens


@pytest.fixture
def two_page_response(make_batch, reviewer):
    """Student s1's answer to 3-17 on two verified pages, OCR boxes recorded."""
    files = [(f"s1_3-17_{n}.png", png_bytes(distinct_image(40 + n, size=(300, 200)))) for n in (1, 2)]
    batch, _ = make_batch(files)
    pages = list(Page.objects.filter(batch=batch).order_by("page_number"))
    for page, raw, corrected in zip(pages, RAW, CORRECTED):
        services.prepare_stored_page(page)
        run = page.ocr_runs.get()
        OcrRun.objects.filter(pk=run.pk).update(status="done", raw_text=raw, tokens=boxed_tokens(raw), seconds=0.1)
        run.refresh_from_db()
        services.seed_transcript(run)
        services.verify_transcript(page, text=corrected, base_version=1, user=reviewer)
    response = Response.objects.get(pk=Page.objects.get(pk=pages[0].pk).response_id)
    return response, pages


def client_of(user):
    client = Client()
    client.force_login(user)
    return client


def scan_config(html):
    marker = '<script id="scan-config" type="application/json">'
    start = html.index(marker) + len(marker)
    return json.loads(html[start:html.index("</script>", start)])


def test_word_boxes_are_mapped_onto_the_corrected_transcript(two_page_response):
    response, pages = two_page_response
    assert response.transcript == "$x^2$ + 1 = 5\n\nso $x = 2$"
    first, second = selectors.response_scans(response)
    assert [first["id"], second["id"]] == [p.pk for p in pages]
    words = {response.transcript[s:e]: box for s, e, *box in first["words"]}
    # "x2" became "$x^2$": its box covers the characters that still match ("x^2" minus the caret).
    assert "x^2" in words and words["5"] == [130, 20, 150, 40]
    offset = response.transcript.index("so")
    assert [w[:2] for w in second["words"]][0] == [offset, offset + 2]


def test_assigned_annotator_sees_the_scans_and_others_do_not(two_page_response, annotator, reviewer):
    response, pages = two_page_response
    other = make_user("ann-other", "annotator")
    labelling.assign_responses(
        responses=Response.objects.filter(pk=response.pk), annotators=[annotator], per_response=1,
        strategy="round_robin",
    )
    html = client_of(annotator).get(reverse("annotation:label", args=[response.pk])).content.decode()
    config = scan_config(html)
    assert [c["url"] for c in config] == [reverse("ocr:page_image", args=[p.pk, "web"]) for p in pages]
    assert 'id="scan-viewer"' in html and "scan_viewer.js" in html
    assert 'id="scan-correct-link"' not in html  # the correction screen is for reviewers
    image = reverse("ocr:page_image", args=[pages[1].pk, "web"])
    assert client_of(annotator).get(image).status_code == 200
    assert client_of(other).get(image).status_code == 403
    assert client_of(other).get(reverse("annotation:label", args=[response.pk])).status_code == 403
    assert client_of(reviewer).get(image).status_code == 200


def test_an_annotator_cannot_open_pages_not_yet_made_into_a_response(make_batch, annotator):
    batch, _ = make_batch([("s9_3-17_1.png", png_bytes(distinct_image(77)))])
    page = Page.objects.get(batch=batch)
    services.prepare_stored_page(page)
    assert client_of(annotator).get(reverse("ocr:page_image", args=[page.pk, "web"])).status_code == 403


def test_adjudication_screen_shows_the_scans(two_page_response, reviewer):
    response, pages = two_page_response
    html = client_of(reviewer).get(reverse("annotation:adjudicate", args=[response.pk])).content.decode()
    assert len(scan_config(html)) == 2 and 'id="scan-correct-link"' in html
