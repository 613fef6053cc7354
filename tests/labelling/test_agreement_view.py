"""The agreement page (annotation.labelling.views.agreement, /agreement/): overall, per question, per pair, the annotator matrix."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.labelling import services
from annotation.models import Response

from ..factories import make_imported_gold
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db
URL = "/agreement/"


def labelled(annotator, annotator2, totals):
    question, responses = labelled_setup(len(totals))
    services.assign_responses(responses=Response.objects.filter(question=question), annotators=[annotator, annotator2],
                              per_response=2, strategy="round_robin")
    for response, (a, b) in zip(responses, totals):
        services.save_label(response=response, user=annotator, data=full_label(*a), base_version=0, submit=True)
        services.save_label(response=response, user=annotator2, data=full_label(*b), base_version=0, submit=True)
    return question, responses


def test_roles(annotator_client):
    assert reverse("annotation:agreement") == URL
    assert Client().get(URL).status_code == 302
    assert annotator_client.get(URL).status_code == 403


def test_figures_and_matrix(reviewer_client, annotator, annotator2):
    # Totals ann1: 7, 1, 3; ann2: 7, 2, 3 -> two equal, all within one, MAD 1/3.
    question, responses = labelled(annotator, annotator2, [((3, 4), (3, 4)), ((1, 0), (2, 0)), ((3, 0), (3, 0))])
    page = reviewer_client.get(URL, {"question": question.pk, "metric": "exact"})
    assert page.status_code == 200
    overall = page.context["report"]["overall"]
    assert (overall["responses"], overall["label_pairs"]) == (3, 3)
    assert overall["exact"] == pytest.approx(2 / 3) and overall["mad"] == pytest.approx(1 / 3)
    html = page.content.decode()
    assert 'id="matrix"' in html and "0.667" in html and "ICC(2,1)" in html
    matrix = page.context["matrix"]
    assert [row["rater"] for row in matrix] == ["ann1", "ann2"]
    assert matrix[0]["cells"][1]["value"] == pytest.approx(2 / 3) and matrix[0]["cells"][0]["value"] is None


def test_imported_gold_is_a_rater_unless_left_out(reviewer_client, annotator, annotator2):
    question, responses = labelled(annotator, annotator2, [((3, 4), (3, 4)), ((1, 0), (2, 0))])
    make_imported_gold(responses, total=7)
    with_imported = reviewer_client.get(URL).context["report"]
    assert with_imported["raters"] == ["(imported)", "ann1", "ann2"]
    without = reviewer_client.get(URL, {"imported": "0"}).context["report"]
    assert without["raters"] == ["ann1", "ann2"]


def test_empty_and_bad_filters(reviewer_client):
    page = reviewer_client.get(URL, {"question": "x", "metric": "nonsense"})
    assert page.status_code == 200 and page.context["metric"] == "kappa"
    assert "No submitted labels to compare yet." in page.content.decode()


def test_questions_without_two_labels_are_counted_not_listed_and_icc_is_explained(reviewer_client, annotator, annotator2):
    compared, _ = labelled(annotator, annotator2, [((3, 4), (3, 4)), ((1, 0), (2, 0))])
    lone, (single,) = labelled_setup(1, statement="Only one label so far.")
    services.assign_responses(responses=Response.objects.filter(pk=single.pk), annotators=[annotator],
                              per_response=1, strategy="round_robin")
    services.save_label(response=single, user=annotator, data=full_label(1, 1), base_version=0, submit=True)
    page = reviewer_client.get(URL)
    report = page.context["report"]
    assert [q["question"] for q in report["questions"]] == [compared.pk]
    assert report["questions_without_pairs"] == 1
    html = page.content.decode()
    assert "1 more question has no answer with two labels yet" in html
    assert 'id="icc-note"' in html and "Which ICC to read" in html
