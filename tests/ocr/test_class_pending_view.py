"""A refused class upload kept for another try (ocr.views.class_pending, /ocr/class/kept/<pk>/):
its reasons, its files and the exam that holds its labels; a POST tries again with other choices;
reviewers only, and only its uploader; an invalid retry is a 400; an unknown id is a 404."""
import re

import pytest
from django.test import Client
from django.urls import reverse

from accounts.services import set_user_language
from ocr.models import PendingClassUpload, ScanBatch

from ..conftest import make_user
from .class_scans import class_pdf, roster, template
from .test_class_pending import release_exam, upload  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def pending(reviewer_client, exam_questions, release_exam):  # noqa: F811
    upload(reviewer_client, exam_questions["exam"], class_pdf(2), roster("a"), template({"1": "7-01", "2": "7-02"}))
    return PendingClassUpload.objects.get()


def test_the_page_shows_the_reasons_and_suggests_the_exam(reviewer_client, pending, release_exam):  # noqa: F811
    page = reviewer_client.get(reverse("ocr:class_pending", args=[pending.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "names question “7-01”, which exam “Scan exam” does not have" in html
    assert f'data-exam="{release_exam.pk}"' in html and "ROSTER.csv" in html


def test_the_kept_files_read_with_the_languages_punctuation(reviewer_client, reviewer, pending):
    """"Class PDF: x.pdf (2.5 KB)" in English; in Chinese a full-width colon and brackets (issue 39)."""
    url = reverse("ocr:class_pending", args=[pending.pk])
    kept = re.search(r'<ul class="small" id="kept-list">.*?</ul>', reviewer_client.get(url).content.decode(), re.S)[0]
    assert re.search(r"<li>Class PDF: <span class=\"mono\">[^<]+</span> \(\d[^)]*\)</li>", kept)
    assert "<li>ROSTER.csv: " in kept
    set_user_language(reviewer, "zh-hans")
    kept = re.search(r'<ul class="small" id="kept-list">.*?</ul>', reviewer_client.get(url).content.decode(), re.S)[0]
    assert re.search(r"<li>全班 PDF：<span class=\"mono\">[^<]+</span> （\d[^）]*）</li>", kept), kept
    assert "ROSTER.csv：<span" in kept and "(" not in kept and ":" not in kept

def test_a_retry_into_the_right_exam_is_taken(reviewer_client, pending, release_exam):  # noqa: F811
    answer = reviewer_client.post(reverse("ocr:class_pending", args=[pending.pk]),
                                  {"exam": release_exam.pk, "engine": "tesseract", "name": "3B"})
    batch = ScanBatch.objects.get()
    assert answer.status_code == 302 and answer["Location"] == reverse("ocr:batch_detail", args=[batch.pk])
    assert batch.exam == release_exam and not PendingClassUpload.objects.exists()


@pytest.mark.parametrize("data", [{"exam": "abc", "engine": "tesseract"}, {"engine": "no-such-engine"}, {}])
def test_an_invalid_retry_is_a_400_and_keeps_the_files(reviewer_client, pending, data):
    answer = reviewer_client.post(reverse("ocr:class_pending", args=[pending.pk]), data)
    assert answer.status_code == 400 and answer.context["form"].errors
    assert PendingClassUpload.objects.filter(pk=pending.pk).exists() and not ScanBatch.objects.exists()


def test_only_its_uploader_and_only_reviewers(annotator, pending):
    url = reverse("ocr:class_pending", args=[pending.pk])
    assert "/accounts/login/" in Client().get(url)["Location"]
    other = Client()
    other.force_login(annotator)
    assert other.get(url).status_code == 403
    other.force_login(make_user("reviewer2", "reviewer"))
    assert other.get(url).status_code == 404


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_upload_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/ocr/class/kept/{pk}/").status_code == 404
