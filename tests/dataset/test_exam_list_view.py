"""The list of exams (annotation.views.exam_list, /exams/): each exam with its numbers of questions
and answers, by name; every logged-in role; anonymous users go to the login page."""
import pytest
from django.urls import reverse

from tests.factories import make_question, make_responses

pytestmark = pytest.mark.django_db
URL = reverse("annotation:exam_list")


def test_anonymous_users_go_to_the_login_page(client):
    answer = client.get(URL)
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]


@pytest.mark.parametrize("role_client", ["annotator_client", "reviewer_client"])
def test_each_exam_with_its_counts_in_name_order(request, role_client):
    first = make_question("Q one", exam_name="Zeta exam")
    make_responses(first, 3)
    make_question("Q two", exam_name="Zeta exam")
    make_question("Q three", exam_name="Alpha exam")
    page = request.getfixturevalue(role_client).get(URL)
    assert page.status_code == 200
    rows = [(e.name, e.n_questions, e.n_responses) for e in page.context["exams"]]
    assert rows == [("Alpha exam", 1, 0), ("Zeta exam", 2, 3)]
    html = page.content.decode()
    assert reverse("annotation:exam_detail", args=[first.exam_id]) in html
    assert html.index("Alpha exam") < html.index("Zeta exam")


def test_a_stray_parameter_is_ignored(annotator_client):
    page = annotator_client.get(URL, {"page": "zz", "exam": "-1"})
    assert page.status_code == 200 and list(page.context["exams"]) == []
