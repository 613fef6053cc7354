"""A kept rubric version (annotation.views.question_rubric_version, /questions/<pk>/rubric/v<version>/): missing ones are 404."""
import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_missing_versions_and_questions_are_404(question, reviewer_client):
    assert reviewer_client.get(reverse("annotation:question_rubric_version", args=[question.pk, 1])).status_code == 404
    assert reviewer_client.get(reverse("annotation:question_rubric_version", args=[question.pk, 2**40])).status_code == 404
    assert reviewer_client.get(reverse("annotation:question_rubric_edit", args=[2**62])).status_code == 404
