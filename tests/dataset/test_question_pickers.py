"""Question pickers name the exam and the start of the statement: two questions labelled "3-16"
in two exams are told apart."""
import pytest
from django.urls import reverse

from tests.factories import make_question

pytestmark = pytest.mark.django_db

PAGES = ["annotation:response_list", "annotation:adjudication_queue", "annotation:export", "annotation:agreement",
         "annotation:assign", "grading:review_disagreements", "grading:judge_run_start"]


@pytest.mark.parametrize("name", PAGES)
def test_pickers_name_exam_and_snippet(admin_client_, name):
    make_question("Find the limit of $a_n = 1/n$.", exam_name="Demo", location="3-16")
    make_question("Prove that every bounded monotone sequence converges, and more.", exam_name="Release",
                  location="3-16")
    html = admin_client_.get(reverse(name)).content.decode()
    assert "Demo · 3-16 — Find the limit of $a_n = 1/n$.</option>" in html
    assert "Release · 3-16 — Prove that every bounded monotone sequence conv…" in html
