import pytest

from annotation.models import Label
from tests.conftest import api_client_for
from tests.factories import make_question, make_responses

pytestmark = pytest.mark.django_db


def test_responses_api_filters_and_paginates(reviewer, sample_data):
    api = api_client_for(reviewer)
    data = api.get("/api/responses/?source=synthetic").json()
    assert data["count"] == 32
    assert "gold_score" in data["results"][0]


def test_blind_annotator_gets_no_gold_fields(annotator):
    question = make_question(blind=True)
    response = make_responses(question, 2, gold=6)
    api = api_client_for(annotator)
    rows = api.get("/api/responses/").json()["results"]
    assert all("gold_score" not in row for row in rows)
    Label.objects.create(response=response[0], annotator=annotator, total=5, submitted=True)
    rows = {row["id"]: row for row in api.get("/api/responses/").json()["results"]}
    assert rows[response[0].pk]["gold_score"] == "6.00"
    assert "gold_score" not in rows[response[1].pk]


def test_questions_api_lists_rubric(annotator, sample_data):
    data = api_client_for(annotator).get("/api/questions/").json()
    assert data["count"] == 2
    assert len(data["results"][0]["checkpoints"]) == 4


def test_annotator_cannot_create_exam(annotator, reviewer):
    assert api_client_for(annotator).post("/api/exams/", {"name": "x"}).status_code == 403
    assert api_client_for(reviewer).post("/api/exams/", {"name": "x"}).status_code == 201


def test_deleting_an_exam_in_use_is_a_clear_409(reviewer, sample_data):
    from annotation.models import Exam

    exam = Exam.objects.first()
    response = api_client_for(reviewer).delete(f"/api/exams/{exam.pk}/")
    assert response.status_code == 409
    assert "cannot be deleted" in response.json()["detail"]
    assert Exam.objects.filter(pk=exam.pk).exists()
