"""The question list: every question with its answer counts."""
import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_question_list_shows_counts(annotator_client, sample_data):
    page = annotator_client.get(reverse("annotation:question_list")).content.decode()
    assert "3-07" in page and "3-08" in page
    assert page.count(">32<") == 2  # 32 responses per question (16 human + 16 synthetic)
