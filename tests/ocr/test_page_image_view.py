"""Page images are served only to reviewers, only as renditions we made."""
import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from ocr import services
from ocr.models import Page

from ..conftest import assert_reviewer_only
from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def test_renditions_are_served_to_reviewers(annotator, reviewer, make_batch, reviewer_client):
    _, pages = pages_without_ocr(make_batch, 1)
    page = pages[0]
    services.prepare_stored_page(page)
    response = assert_reviewer_only(reverse("ocr:page_image", args=[page.pk, "web"]), annotator, reviewer)
    assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"
    assert b"".join(response.streaming_content)[:3] == b"\xff\xd8\xff"
    page.refresh_from_db()
    for kind, content_type in (("thumb", "image/jpeg"), ("processed", "image/png"), ("master", "image/png")):
        response = reviewer_client.get(reverse("ocr:page_image", args=[page.pk, kind]))
        assert response.status_code == 200 and response["Content-Type"] == content_type
    assert page.status == Page.Status.PREPARED


def test_unknown_or_missing_renditions_are_404(reviewer_client, make_batch):
    _, pages = pages_without_ocr(make_batch, 1)
    assert reviewer_client.get(reverse("ocr:page_image", args=[pages[0].pk, "web"])).status_code == 404
    assert reviewer_client.get(reverse("ocr:page_image", args=[pages[0].pk, "source_file"])).status_code == 404
    assert reviewer_client.get(reverse("ocr:page_image", args=[pages[0].pk, "..%2Fmaster"])).status_code == 404
    assert reviewer_client.get(reverse("ocr:page_image", args=[99999, "web"])).status_code == 404


def test_a_page_read_by_rapidocr_gets_its_thresholded_rendition_when_first_asked(reviewer_client, make_batch):
    """RapidOCR reads the gray page: its page task makes no threshold; Alt+P's image is made once, on demand."""
    _, pages = pages_without_ocr(make_batch, 1)
    page = pages[0]
    prepared = services.prepare_stored_page(page, reads="gray")
    assert prepared.binary is None
    page.refresh_from_db()
    assert page.status == Page.Status.PREPARED and page.processed == "" and page.web
    url = reverse("ocr:page_image", args=[page.pk, "processed"])
    response = reviewer_client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content)[:8] == b"\x89PNG\r\n\x1a\n"
    page.refresh_from_db()
    made = page.processed
    assert made and default_storage.exists(made)
    reviewer_client.get(url)
    page.refresh_from_db()
    assert page.processed == made  # made once, then served


def test_no_processed_rendition_is_made_for_a_page_not_prepared(reviewer_client, make_batch):
    _, pages = pages_without_ocr(make_batch, 1)
    assert reviewer_client.get(reverse("ocr:page_image", args=[pages[0].pk, "processed"])).status_code == 404
    pages[0].refresh_from_db()
    assert pages[0].processed == ""


# --- a blind exam's annotators get the scan with its name regions blank (issue 40, item 2) ------

def _labelled_class_page(annotator, *, blind, degrees):
    """A class PDF's page (the form scanned `degrees` off, its name line a redaction region),
    rendered and prepared, making a response assigned to `annotator`."""
    import hashlib

    from annotation.labelling.services import assign_responses
    from annotation.models import Response
    from ocr import packets
    from tests.factories import make_question

    from .class_scans import pdf_upload, roster
    from .test_redaction import template
    from .test_redaction_tilted import form, tilted_pdf

    question = make_question("Question 3-17: find $a_n$.", exam_name=f"Scan exam {blind}", location="3-17", blind=blind)
    _, region = form()
    batch = packets.ingest_class_pdf(exam=question.exam, engine="tesseract", upload=pdf_upload(tilted_pdf(degrees, 1)),
                                     roster=roster("s01"), template=template({"1": "3-17"}, [region]), name="3B")
    page = services.render_pending_page(batch.pages.get())
    services.prepare_stored_page(page)
    response = Response.objects.create(question=question, student_id="s01", transcript="a_n = 3n - 1",
                                       transcript_hash=hashlib.sha256(b"a_n = 3n - 1").hexdigest())
    Page.objects.filter(pk=page.pk).update(response=response)
    assign_responses(responses=Response.objects.filter(pk=response.pk), annotators=[annotator], per_response=1,
                     strategy="round_robin")
    return Page.objects.get(pk=page.pk), response


def _image(answer):
    import io

    from PIL import Image

    body = answer.content if hasattr(answer, "content") and not answer.streaming else b"".join(answer.streaming_content)
    image = Image.open(io.BytesIO(body))
    image.load()
    return image


def _name_boxes(page, kind, image):
    from ocr import redaction

    if kind == "master":
        return redaction.pixel_boxes(image.size, redaction.scan_regions(page.redaction_regions, image.size,
                                                                        page.skew_degrees))
    return redaction.pixel_boxes(image.size, page.screen_redaction_regions)


def _urls(client, response, page):
    """Every image URL of the page an annotator can reach: the labelling screen's, and each kind."""
    import json

    label = client.get(reverse("annotation:label", args=[response.pk]))
    assert label.status_code == 200
    html = label.content.decode()
    opening = '<script id="scan-config" type="application/json">'
    start = html.index(opening) + len(opening)
    scans = json.loads(html[start:html.index("</script>", start)])
    assert f'src="{scans[0]["url"]}"' in html
    assert [scan["id"] for scan in scans] == [page.pk]
    return [(scans[0]["url"], "web")] + [(reverse("ocr:page_image", args=[page.pk, kind]), kind)
                                         for kind in ("web", "thumb", "processed", "master")]


@pytest.mark.parametrize("degrees", [0.0, 3.0])
def test_a_blind_annotator_gets_every_image_of_a_page_with_the_name_blank(annotator, reviewer, degrees):
    import numpy as np
    from django.test import Client

    page, response = _labelled_class_page(annotator, blind=True, degrees=degrees)
    annotator_client, reviewer_client = Client(), Client()
    annotator_client.force_login(annotator)
    reviewer_client.force_login(reviewer)
    for url, kind in _urls(annotator_client, response, page):
        seen = annotator_client.get(url)
        assert seen.status_code == 200, (url, seen.status_code)
        image = _image(seen)
        gray = np.asarray(image.convert("L"))
        for left, top, right, bottom in _name_boxes(page, kind, image):
            inside = gray[top:bottom + 1, left:right + 1]
            assert int(inside.max()) - int(inside.min()) <= 3 and inside.mean() < 10, (kind, inside.min(), inside.max())
        assert gray.min() < 100 and gray.max() > 200  # the rest of the page is there
        # A reviewer, who fixes packets, gets the scan whole: the name's ink is in the region.
        whole = np.asarray(_image(reviewer_client.get(url)).convert("L"))
        assert any(int(whole[top:bottom + 1, left:right + 1].min()) < 120
                   for left, top, right, bottom in _name_boxes(page, kind, image)), kind


def test_an_annotator_of_an_exam_that_is_not_blind_gets_the_scan_as_it_is(annotator):
    import numpy as np
    from django.test import Client

    page, response = _labelled_class_page(annotator, blind=False, degrees=0.0)
    client = Client()
    client.force_login(annotator)
    image = _image(client.get(reverse("ocr:page_image", args=[page.pk, "web"])))
    gray = np.asarray(image.convert("L"))
    ((left, top, right, bottom),) = _name_boxes(page, "web", image)
    assert gray[top:bottom + 1, left:right + 1].min() < 120
