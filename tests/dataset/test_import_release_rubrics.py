"""The full RealMath-Eval release imported: every question's rubric read whole, each step filed under
its sub-question, full points set; what the data contradicts is reported on the import report, the
question page (reviewers) and the rubric editor, and blind annotators are not shown scores."""
import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.importers.realmath import import_realmath
from annotation.models import ImportReport, Question, SubQuestion

pytestmark = pytest.mark.django_db
FULL = Path(__file__).resolve().parents[2] / "fixtures" / "realmath_eval_full"


@pytest.fixture
def release():
    with open(FULL / "realmath_eval.json", "rb") as handle:
        return import_realmath(handle, "realmath_eval.json", exam_name="Release")


def test_fourteen_questions_every_sub_question_with_its_full_points(release):
    questions = Question.objects.filter(exam__name="Release")
    assert questions.count() == 14
    assert not SubQuestion.objects.filter(question__in=questions, max_points__isnull=True).exists()
    for question in questions:
        subs = list(question.sub_questions.all())
        assert sum(s.max_points for s in subs) == question.full_score, question.location
        # every step is filed under a sub-question, in the order of the text
        orders = [c.sub_question.order for c in question.checkpoints.order_by("order")]
        assert None not in orders and orders == sorted(orders), question.location


def test_a_3_19_answer_has_its_three_sub_questions(release):
    question = Question.objects.get(exam__name="Release", location="3-19")
    by_label = {s.label: (s.max_points, [int(c.cumulative_points) for c in s.checkpoints.order_by("order")])
                for s in question.sub_questions.all()}
    assert by_label == {"(1)": (Decimal(4), [2, 3, 4]), "(2)": (Decimal(5), [5, 6, 7, 9]),
                        "(3)": (Decimal(5), [11, 12, 13, 14])}


def test_the_import_report_lists_the_contradicted_rubrics(release, client, reviewer):
    report = ImportReport.objects.get(pk=release.report_id)
    rubric = [w for w in report.warnings if w.get("rubric")]
    # 3-17 (13 points): 9 on (1) of 7; 3-18 (the function): 11 on (2) of 6; 3-18 (the triangle): 7 on (2) of 6
    assert sorted(w["location"] for w in rubric) == ["3-17", "3-18", "3-18"]
    client.force_login(reviewer)
    page = client.get(reverse("annotation:import_report", args=[report.pk])).content.decode()
    assert 'id="rubric-warnings"' in page and "more than the 7 its markers give" in page
    linked = re.findall(r'<li><a href="[^"]+">([^<]+)</a>', page.split('id="rubric-warnings"')[1].split("</section>")[0])
    assert len(linked) == len(set(linked)) == 3  # the two 3-18s told apart by their question numbers


def test_question_page_says_what_contradicts_the_markers_to_reviewers_only(release, client, reviewer, annotator):
    question = Question.objects.get(exam__name="Release", location="3-17", full_score=13)
    url = reverse("annotation:question_detail", args=[question.pk])
    client.force_login(reviewer)
    page = client.get(url).content.decode()
    assert "9 points on sub-question (1), more than the 7" in page
    assert client.get(reverse("annotation:question_rubric_edit", args=[question.pk])).content.decode().count(
        "9 points on sub-question (1)") == 1
    client.force_login(annotator)
    page = client.get(url).content.decode()
    assert 'id="rubric-problems"' not in page and "9 points" not in page  # scores stay hidden from annotators


def test_a_question_read_by_an_earlier_reader_is_mended_by_saving_its_rubric_unchanged(release, client, reviewer):
    """As the old reader left 3-19: every step under (2), no maxima; the page says so and the
    editor, saved as it opens, files the steps again and sets the maxima (a new rubric version)."""
    from annotation.forms import RubricEditForm

    question = Question.objects.get(exam__name="Release", location="3-19")
    second = question.sub_questions.get(label="(2)")
    question.checkpoints.update(sub_question=second)
    question.sub_questions.update(max_points=None)
    client.force_login(reviewer)
    page = client.get(reverse("annotation:question_detail", args=[question.pk])).content.decode()
    assert "read from the markers but not set on the question" in page
    form = RubricEditForm(question=question)
    data = {name: "" if value is None else str(value) for name, value in form.initial.items()}
    response = client.post(reverse("annotation:question_rubric_edit", args=[question.pk]), data)
    assert response.status_code == 302
    question.refresh_from_db()
    assert question.rubric_version == 2
    assert {s.label: s.max_points for s in question.sub_questions.all()} == {
        "(1)": Decimal(4), "(2)": Decimal(5), "(3)": Decimal(5)}
    assert [c.sub_question.label for c in question.checkpoints.order_by("order")] == ["(1)"] * 3 + ["(2)"] * 4 + ["(3)"] * 4
