"""The exam page (annotation.views.exam_detail, /exams/<pk>/): questions with counts (reviewers: all; annotators: their own work only), its links, bounded queries."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.labelling import services
from annotation.models import Exam, Label

from ..factories import make_question, make_responses
from .helpers import full_label

pytestmark = pytest.mark.django_db


def client_of(user):
    client = Client()
    client.force_login(user)
    return client


def test_reviewers_see_the_counts_and_the_links(exam_setup, reviewer_client):
    exam, question = exam_setup["exam"], exam_setup["question"]
    user = exam_setup["people"][0]
    services.save_label(response=exam_setup["responses"][0], user=user, data=full_label(3, 1), base_version=0,
                        submit=True)
    page = reviewer_client.get(reverse("annotation:exam_detail", args=[exam.pk]))
    assert page.status_code == 200
    row = page.context["rows"][0]
    assert row["question"].pk == question.pk
    assert (row["n_responses"], row["n_labels"], row["n_golds"], row["n_judged"]) == (2, 1, 1, 3)
    html = page.content.decode()
    for name in ("annotation:agreement", "annotation:adjudication_queue", "grading:review_disagreements",
                 "studies:probes", "grading:judge_run_start"):
        assert f'{reverse(name)}?exam={exam.pk}' in html
    assert 'id="anchoring"' in html and 'id="anchoring-form"' not in html  # reviewers watch, admins start
    assert reverse("annotation:exam_detail", args=[exam.pk]) in reviewer_client.get(
        reverse("annotation:exam_list")).content.decode()


def test_annotators_see_their_own_work_and_nothing_hidden(exam_setup):
    exam = exam_setup["exam"]
    Exam.objects.filter(pk=exam.pk).update(anchoring=True, anchoring_setting="anchor-judge", anchoring_seed=3)
    user = exam_setup["people"][0]
    services.save_label(response=exam_setup["responses"][0], user=user, data=full_label(3, 1), base_version=0,
                        submit=True)
    page = client_of(user).get(reverse("annotation:exam_detail", args=[exam.pk]))
    assert page.status_code == 200
    row = page.context["rows"][0]
    assert (row["n_responses"], row["n_assigned"], row["n_submitted"]) == (2, 2, 1)
    assert "n_labels" not in row and "n_golds" not in row and "n_judged" not in row
    html = page.content.decode()
    for hidden in ('data-count="golds"', 'data-count="judged"', 'data-count="labels"', 'id="anchoring"',
                   "anchor-judge", "other-judge", "Gold scores", "Judge results"):
        assert hidden not in html, hidden
    assert page.context["anchoring"] is None
    # The anchoring form is an admin's: an annotator's POST changes nothing.
    refused = client_of(user).post(reverse("annotation:exam_anchoring", args=[exam.pk]), {"action": "stop"})
    assert refused.status_code in (302, 403) and Exam.objects.get(pk=exam.pk).anchoring


def test_the_page_reads_in_a_bounded_number_of_queries(exam_setup, reviewer_client, django_assert_max_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    exam = exam_setup["exam"]
    Exam.objects.filter(pk=exam.pk).update(anchoring_setting="anchor-judge", anchoring_seed=3)
    url = reverse("annotation:exam_detail", args=[exam.pk])
    reviewer_client.get(url)  # the session and the user's role read once
    with CaptureQueriesContext(connection) as one_question:
        reviewer_client.get(url)
    for n in range(2, 12):
        make_responses(make_question(f"Question {n}: $x^{n}$.", exam_name=exam.name), 3)
    with django_assert_max_num_queries(16), CaptureQueriesContext(connection) as eleven:
        page = reviewer_client.get(url)
    assert len(page.context["rows"]) == 11
    assert len(eleven) == len(one_question)  # no query per question


def test_an_exam_with_no_judge_results_says_what_to_do_first(admin_client_):
    question = make_question("Lonely: $z$.", exam_name="Unjudged exam")
    page = admin_client_.get(reverse("annotation:exam_detail", args=[question.exam_id]))
    assert 'id="anchoring-none"' in page.content.decode()


def test_an_unknown_exam_is_a_404(reviewer_client):
    assert reviewer_client.get(reverse("annotation:exam_detail", args=[10**30])).status_code == 404
    assert Label.objects.count() == 0
