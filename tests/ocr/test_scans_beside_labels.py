"""The scan beside every label: page images of a response on the labelling and adjudication
screens, for the people allowed to label it, with OCR word boxes in transcript offsets."""
import json

import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse

from annotation.labelling import scans
from annotation.labelling import services as labelling
from annotation.models import Response
from ocr import selectors, services
from ocr.models import OcrRun, Page, TranscriptFlag

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
    assert 'id="scan-viewer"' in html and "js/scan_pages.js" in html  # the page glue of the one scan viewer
    assert 'id="scan-correct-link"' not in html  # the correction screen is for reviewers
    assert 'id="flag-form"' in html and reverse("ocr:flag_transcript", args=[response.pk]) in html
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


def test_the_scans_reach_annotation_only_through_ocrs_scan_panel_hook(two_page_response, reviewer, monkeypatch):
    """annotation imports no ocr: its screens read the module ocr names as `scan_panel` on its
    AppConfig (annotation.labelling.scans). Without that hook the same answer has no scans, no flag
    link and no batches to assign: nothing else carries them."""
    response, pages = two_page_response
    label_url = reverse("annotation:label", args=[response.pk])
    assert len(scan_config(client_of(reviewer).get(label_url).content.decode())) == 2
    assert [batch.pk for batch in scans.scan_batches_to_assign()] == [pages[0].batch_id]
    monkeypatch.setattr(apps.get_app_config("ocr"), "scan_panel", None)
    html = client_of(reviewer).get(label_url).content.decode()
    assert 'id="scan-config"' not in html and 'id="scan-viewer"' not in html
    assert reverse("ocr:flag_transcript", args=[response.pk]) not in html
    assert list(scans.scan_batches_to_assign()) == [] and scans.scan_batch(pages[0].batch_id) is None
    assert scans.answers_waiting(pages[0].batch) == 0


# --- "transcript wrong here" ----------------------------------------------------------------


def flag(client, response, start, end, note="scan says x^3"):
    return client.post(
        reverse("ocr:flag_transcript", args=[response.pk]),
        data=json.dumps({"start": start, "end": end, "note": note}), content_type="application/json",
    )


def test_a_flag_goes_to_the_page_holding_the_passage_and_leads_the_queue(two_page_response, annotator, reviewer):
    response, pages = two_page_response
    labelling.assign_responses(
        responses=Response.objects.filter(pk=response.pk), annotators=[annotator], per_response=1,
        strategy="round_robin",
    )
    start = response.transcript.index("$x = 2$")
    answer = flag(client_of(annotator), response, start, start + 7)
    assert answer.status_code == 201 and answer.json()["page"] == pages[1].pk
    stored = TranscriptFlag.objects.get()
    assert (stored.quote, stored.note, stored.flagged_by) == ("$x = 2$", "scan says x^3", annotator)
    assert CORRECTED[1][stored.page_start:stored.page_end] == "$x = 2$"
    # The batch lists the flagged page first, and stepping through the batch starts there.
    assert selectors.page_order(pages[0].batch)[0] == pages[1].pk
    batch_html = client_of(reviewer).get(reverse("ocr:batch_detail", args=[pages[0].batch_id])).content.decode()
    assert batch_html.index(f'data-page="{pages[1].pk}"') < batch_html.index(f'data-page="{pages[0].pk}"')
    assert "flagged" in batch_html
    html = client_of(reviewer).get(reverse("ocr:page_correct", args=[pages[1].pk])).content.decode()
    assert 'id="transcript-flags"' in html and "scan says x^3" in html and "so <mark>$x = 2$</mark>" in html
    # Verifying the page again closes the flag.
    services.verify_transcript(pages[1], text="so $x = 3$", base_version=2, user=reviewer)
    assert TranscriptFlag.objects.get().resolved_by == reviewer
    html = client_of(reviewer).get(reverse("ocr:page_correct", args=[pages[1].pk])).content.decode()
    assert 'id="transcript-flags"' not in html


def test_flags_are_refused_clearly(two_page_response, annotator, reviewer):
    response, _ = two_page_response
    assert flag(client_of(annotator), response, 0, 3).status_code == 403  # not assigned
    answer = flag(client_of(reviewer), response, 5, 500)
    assert answer.status_code == 400 and "outside the transcript" in answer.json()["detail"]
    assert flag(client_of(reviewer), response, "a", 3).status_code == 400
    bad = client_of(reviewer).post(
        reverse("ocr:flag_transcript", args=[response.pk]), data="{", content_type="application/json"
    )
    assert bad.status_code == 400
    for body in ("[" * 5000 + "]" * 5000, '{"start": ' + "9" * 5001 + "}"):  # RecursionError, int() limit: 500s once
        hostile = client_of(reviewer).post(reverse("ocr:flag_transcript", args=[response.pk]), data=body,
                                           content_type="application/json")
        assert hostile.status_code == 400
    assert flag(client_of(reviewer), response, 0, 3, note="x" * 2001).status_code == 400
    assert client_of(reviewer).post(reverse("ocr:flag_transcript", args=[999999])).status_code == 404
    assert not TranscriptFlag.objects.exists()


def test_the_labelling_queue_marks_answers_made_from_scans(two_page_response, annotator):
    from tests.factories import make_responses

    response, _ = two_page_response
    typed = make_responses(response.question, 1, start=900)[0]
    labelling.assign_responses(responses=Response.objects.filter(pk__in=[response.pk, typed.pk]),
                               annotators=[annotator], per_response=1, strategy="round_robin")
    html = client_of(annotator).get(reverse("annotation:label_queue")).content.decode()
    rows = {pk: html.split(f"response #{pk}</a>")[1].split("</tr>")[0] for pk in (response.pk, typed.pk)}
    assert "from scans" in rows[response.pk] and "from scans" not in rows[typed.pk]
