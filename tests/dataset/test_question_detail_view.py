"""A question's page: statement (escaped) and reference with its checkpoints; a missing one is a 404."""
import pytest
from django.urls import reverse

from annotation.models import Question

pytestmark = pytest.mark.django_db


def test_question_page_highlights_checkpoints(annotator_client, sample_data):
    question = Question.objects.get(location="3-07")
    page = annotator_client.get(reverse("annotation:question_detail", args=[question.pk])).content.decode()
    assert page.count('class="checkpoint"') == 4
    assert "10 pts" in page


def test_question_text_is_escaped(annotator_client, sample_data):
    question = Question.objects.get(location="3-07")
    question.statement = "<script>alert(1)</script> $x$"
    question.save()
    page = annotator_client.get(reverse("annotation:question_detail", args=[question.pk])).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;" in page


def test_missing_question_is_404(annotator_client, db):
    assert annotator_client.get(reverse("annotation:question_detail", args=[999])).status_code == 404
    assert annotator_client.get(reverse("annotation:question_detail", args=[10**30])).status_code == 404
