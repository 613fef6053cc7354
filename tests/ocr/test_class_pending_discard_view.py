"""Deleting a kept class upload (ocr.views.class_pending_discard, /ocr/class/kept/<pk>/discard/):
POST only, reviewers only and only its uploader; the row and its stored PDF go; an unknown id is
a 404."""
import pytest
from django.core.files.storage import default_storage
from django.test import Client
from django.urls import reverse

from ocr.models import PendingClassUpload

from ..conftest import make_user
from .class_scans import class_pdf, roster, template
from .test_class_pending import GOOD, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def pending(reviewer_client, exam_questions):
    upload(reviewer_client, exam_questions["exam"], class_pdf(3), roster("a"), template(GOOD))
    return PendingClassUpload.objects.get()


def test_the_uploader_deletes_it_with_its_pdf(reviewer_client, pending):
    assert default_storage.exists(pending.pdf_stored)
    answer = reviewer_client.post(reverse("ocr:class_pending_discard", args=[pending.pk]), follow=True)
    assert answer.redirect_chain[-1][0] == reverse("ocr:batch_list")
    assert "The kept files were deleted." in answer.content.decode()
    assert not PendingClassUpload.objects.exists() and not default_storage.exists(pending.pdf_stored)


def test_refused_writes_delete_nothing(annotator, reviewer, pending):
    url = reverse("ocr:class_pending_discard", args=[pending.pk])
    assert "/accounts/login/" in Client().post(url)["Location"]
    other = Client()
    other.force_login(annotator)
    assert other.post(url).status_code == 403
    other.force_login(make_user("reviewer2", "reviewer"))
    assert other.post(url).status_code == 404  # another reviewer's upload
    other.force_login(reviewer)
    assert other.get(url).status_code == 405
    assert PendingClassUpload.objects.filter(pk=pending.pk).exists()


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_upload_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/ocr/class/kept/{pk}/discard/").status_code == 404
