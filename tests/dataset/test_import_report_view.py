"""The import report (annotation.views.import_report, /import/<id>/): counts in words, where each
question of a release went (issue 34), where skipped answers sit."""
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Exam, ImportReport
from tests.conftest import REALMATH_HUMAN

pytestmark = pytest.mark.django_db


def test_the_report_lists_where_each_question_went(reviewer_client):
    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", "First")
    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", "Second", "--overlap", "move")
    report = ImportReport.objects.order_by("-id").first()
    html = reviewer_client.get(reverse("annotation:import_report", args=[report.pk])).content.decode()
    assert html.count("moved from “First” into “Second”, with its answers") == 2
    assert "<strong>2</strong> questions moved into this exam from another, with their answers" in html
    assert "32 answers are already in the exam <strong>Second</strong>." in html


def test_a_report_naming_an_exam_that_is_gone_still_renders(reviewer_client):
    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", "First")
    report = ImportReport.objects.get()
    report.counts["questions"][0]["exam"] = 999999
    report.counts["questions"].append({"how": "nonsense"})
    report.save()
    page = reviewer_client.get(reverse("annotation:import_report", args=[report.pk]))
    assert page.status_code == 200 and "added to “?”" in page.content.decode()
    assert Exam.objects.filter(name="First").exists()


def test_annotators_cannot_open_a_report(annotator_client):
    call_command("import_realmath", str(REALMATH_HUMAN))
    report = ImportReport.objects.get()
    assert annotator_client.get(reverse("annotation:import_report", args=[report.pk])).status_code == 403
