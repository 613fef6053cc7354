"""The start page: how many questions and answers there are, by source; login required."""
import re

import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import make_question, make_responses

pytestmark = pytest.mark.django_db


def test_counts_of_questions_and_answers_by_source(annotator_client):
    question = make_question()
    make_question(statement="A second question.")
    make_responses(question, 3)
    make_responses(question, 2, start=3, source="synthetic")
    page = annotator_client.get(reverse("home")).content.decode()
    cards = dict((label, int(n)) for n, label in re.findall(r"<strong>(\d+)</strong> (\w+)</a>", page))
    assert cards == {"questions": 2, "responses": 5, "human": 3, "synthetic": 2}


def test_login_required():
    answer = Client().get(reverse("home"))
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]
