"""The fix screen of a class batch (ocr.views.batch_packets, /ocr/batches/<pk>/packets/): each
student's packet in roster order, page by page with its PDF page, and the history of fixes;
reviewers only; an unknown id is a 404."""
import pytest
from django.urls import reverse

from ocr import packets

from ..conftest import assert_reviewer_only
from .test_packets import class_batch, page_at

pytestmark = pytest.mark.django_db


def test_reviewers_only_and_packets_in_roster_order(annotator, reviewer, exam_questions):
    batch = class_batch(exam_questions, reviewer, students=("s02", "s01"))
    page = assert_reviewer_only(reverse("ocr:batch_packets", args=[batch.pk]), annotator, reviewer)
    html = page.content.decode()
    assert page.status_code == 200
    assert html.index('data-student="s02"') < html.index('data-student="s01"')
    assert "PDF p. 1" in html and "PDF p. 6" in html and "No fix made yet." in html
    assert [(p["student_id"], len(p["pages"])) for p in page.context["packets"]] == [("s02", 3), ("s01", 3)]


def test_the_history_shows_a_fix(reviewer_client, reviewer, exam_questions):
    batch = class_batch(exam_questions, reviewer)
    packets.swap_pages(page_at(batch, 2), page_at(batch, 5), user=reviewer)
    html = reviewer_client.get(reverse("ocr:batch_packets", args=[batch.pk])).content.decode()
    assert "No fix made yet." not in html and "swapped" in html and "by rev1" in html


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_batch_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/ocr/batches/{pk}/packets/").status_code == 404
