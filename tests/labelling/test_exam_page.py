"""The exam page: questions with counts (reviewers: answers, labels, golds, judge results;
annotators: their own work only), its links, and the anchoring experiment started, watched and
stopped there (annotation.views.exam_detail, annotation.labelling.views.exam_anchoring)."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.labelling import services
from annotation.labelling.experiment import anchor_shown
from annotation.models import Exam, Label, Response
from grading.models import JudgeSetting

from ..conftest import make_user
from ..factories import make_question, make_responses, make_results, set_gold
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db


def client_of(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def exam_setup(db):
    """A blind exam with one two-answer question, judged by 'anchor-judge' (6 and 2) and by
    'other-judge' (one answer), eight annotators assigned to both answers, one gold."""
    question, responses = labelled_setup(2)
    exam = question.exam
    judge = JudgeSetting.objects.create(name="anchor-judge", version=1, kind=JudgeSetting.Kind.EXTERNAL, model="m")
    other = JudgeSetting.objects.create(name="other-judge", version=1, kind=JudgeSetting.Kind.EXTERNAL, model="m")
    make_results(judge, responses, [6, 2])
    make_results(other, responses[:1], [5], key_prefix="o")
    set_gold(responses[:1], [4])
    people = [make_user(f"anch-{i}", "annotator") for i in range(8)]
    services.assign_responses(responses=Response.objects.filter(pk__in=[r.pk for r in responses]),
                              annotators=people, per_response=8, strategy="round_robin")
    return {"exam": exam, "question": question, "responses": responses, "people": people}


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
                 "grading:studies_probes", "grading:judge_run_start"):
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


def test_admin_starts_watches_and_stops_the_experiment(exam_setup, admin_client_):
    exam, responses, people = exam_setup["exam"], exam_setup["responses"], exam_setup["people"]
    url = reverse("annotation:exam_detail", args=[exam.pk])
    page = admin_client_.get(url)
    html = page.content.decode()
    assert 'id="anchoring-form"' in html and "Not started" in html
    assert [value for value, _ in page.context["anchoring"]["form"].fields["setting"].choices] == \
        ["anchor-judge", "other-judge"]  # the settings that scored this exam, most answers first
    started = admin_client_.post(reverse("annotation:exam_anchoring", args=[exam.pk]),
                                     {"action": "start", "setting": "anchor-judge", "seed": "11"})
    assert started.status_code == 302 and started["Location"] == url + "#anchoring"
    exam.refresh_from_db()
    assert (exam.anchoring, exam.anchoring_setting, exam.anchoring_seed) == (True, "anchor-judge", 11)
    for response in responses:
        for i, user in enumerate(people):
            services.save_label(response=response, user=user, data=full_label(3, i % 4), base_version=0, submit=True)
    page = admin_client_.get(url)
    progress = page.context["anchoring"]["progress"]
    shown = sum(anchor_shown(11, r.pk, u.pk) for r in responses for u in people)
    assert progress["assignments_shown"] == shown and progress["assignments_hidden"] == 16 - shown
    assert progress["labels_shown"] + progress["labels_hidden"] == 16 and progress["labels_shown"] == shown
    assert (progress["answers_scored"], progress["answers"], progress["labels_with_score"]) == (2, 2, 16)
    table = page.context["anchoring"]["table"]
    assert table["figures"]["n_labels"] == 16 and 'id="anchoring-table"' in page.content.decode()
    # A new seed is a new run: earlier labels are counted apart, not mixed in.
    admin_client_.post(reverse("annotation:exam_anchoring", args=[exam.pk]),
                           {"action": "start", "setting": "anchor-judge", "seed": "12"})
    page = admin_client_.get(url)
    assert page.context["anchoring"]["progress"]["labels_earlier"] == 16
    assert page.context["anchoring"]["table"] is None and 'id="anchoring-no-results"' in page.content.decode()
    stopped = admin_client_.post(reverse("annotation:exam_anchoring", args=[exam.pk]), {"action": "stop"})
    assert stopped.status_code == 302
    exam.refresh_from_db()
    assert not exam.anchoring and exam.anchoring_setting == "anchor-judge"


@pytest.mark.parametrize("data, words", [
    ({"action": "start", "setting": "no-such-judge", "seed": "1"}, "Select a valid choice"),
    ({"action": "start", "setting": "anchor-judge", "seed": "-1"}, "Seed"),
    ({"action": "start", "setting": "anchor-judge", "seed": "²"}, "Seed"),
    ({"action": "start", "setting": "anchor-judge", "seed": str(2**40)}, "Seed"),
])
def test_bad_choices_change_nothing_and_say_why(exam_setup, admin_client_, data, words):
    exam = exam_setup["exam"]
    answer = admin_client_.post(reverse("annotation:exam_anchoring", args=[exam.pk]), data, follow=True)
    assert answer.status_code == 200 and words in answer.content.decode()
    exam.refresh_from_db()
    assert not exam.anchoring and exam.anchoring_setting == ""


def test_a_setting_that_scored_no_answer_of_the_exam_is_refused(exam_setup):
    elsewhere = make_question("Elsewhere: $y$.", exam_name="Other exam")
    setting = JudgeSetting.objects.create(name="elsewhere-judge", version=1, kind=JudgeSetting.Kind.EXTERNAL, model="m")
    make_results(setting, make_responses(elsewhere, 1), [3], key_prefix="e")
    with pytest.raises(services.AnchoringInvalid, match="No judge setting named “elsewhere-judge” has scored"):
        services.start_anchoring(exam=exam_setup["exam"], setting="elsewhere-judge", seed=1)
    with pytest.raises(services.AnchoringInvalid, match="seed must be a whole number"):
        services.start_anchoring(exam=exam_setup["exam"], setting="anchor-judge", seed=-3)


def test_an_exam_with_no_judge_results_says_what_to_do_first(admin_client_):
    question = make_question("Lonely: $z$.", exam_name="Unjudged exam")
    page = admin_client_.get(reverse("annotation:exam_detail", args=[question.exam_id]))
    assert 'id="anchoring-none"' in page.content.decode()


def test_an_unknown_exam_is_a_404(reviewer_client):
    assert reviewer_client.get(reverse("annotation:exam_detail", args=[10**30])).status_code == 404
    assert Label.objects.count() == 0
