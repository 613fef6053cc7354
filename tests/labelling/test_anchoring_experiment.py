"""The anchoring experiment: a seeded half of the assignments sees the judge's pre-grade; the
agreement page compares the halves (annotation.labelling.experiment)."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.labelling import services
from annotation.labelling.experiment import anchor_shown, anchoring_figures
from annotation.models import Exam, Label, Response
from grading.models import JudgeSetting

from ..conftest import make_user
from ..factories import make_results
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db


# --- the seeded half --------------------------------------------------------------------------

def test_half_is_deterministic_and_about_half():
    pairs = [(r, a) for r in range(1, 201) for a in range(1, 6)]
    first = [anchor_shown(7, r, a) for r, a in pairs]
    assert first == [anchor_shown(7, r, a) for r, a in pairs]  # same seed, same half
    assert 0.45 < sum(first) / len(first) < 0.55
    other = [anchor_shown(8, r, a) for r, a in pairs]
    assert other != first and 0.45 < sum(other) / len(other) < 0.55
    # Adding assignments does not move the old ones.
    assert [anchor_shown(7, r, a) for r, a in pairs[:50]] == first[:50]


# --- figures on a constructed case ------------------------------------------------------------

def test_figures_on_a_constructed_case():
    labels = [
        # shown: experts pulled to the judge (|e-j| 0 or 1), two experts per response agree exactly
        {"response": 1, "rater": 1, "expert": 5, "judge": 5, "shown": True},
        {"response": 1, "rater": 2, "expert": 5, "judge": 5, "shown": True},
        {"response": 2, "rater": 1, "expert": 6, "judge": 7, "shown": True},
        {"response": 2, "rater": 2, "expert": 6, "judge": 7, "shown": True},
        # hidden: experts 3 below the judge, disagreeing by 2
        {"response": 3, "rater": 1, "expert": 2, "judge": 5, "shown": False},
        {"response": 3, "rater": 2, "expert": 4, "judge": 7, "shown": False},
        {"response": 4, "rater": 1, "expert": 1, "judge": 4, "shown": False},
        {"response": 4, "rater": 2, "expert": 3, "judge": 6, "shown": False},
        # a pair across arms and a label without a judge score
        {"response": 5, "rater": 1, "expert": 3, "judge": None, "shown": True},
        {"response": 5, "rater": 2, "expert": 3, "judge": None, "shown": False},
    ]
    figures = anchoring_figures(labels, seed=3)
    shown, hidden = figures["arms"]["shown"], figures["arms"]["hidden"]
    assert (shown["n_labels"], shown["n_judged"], shown["n_pairs"]) == (5, 4, 2)
    assert (hidden["n_labels"], hidden["n_judged"], hidden["n_pairs"]) == (5, 4, 2)
    assert figures["mixed_pairs"] == 1
    assert shown["abs_diff"] == pytest.approx(0.5) and hidden["abs_diff"] == pytest.approx(3.0)
    assert shown["signed_diff"] == pytest.approx(-0.5) and hidden["signed_diff"] == pytest.approx(-3.0)
    assert shown["expert_mad"] == 0 and hidden["expert_mad"] == 2
    assert shown["expert_within_one"] == 1 and hidden["expert_within_one"] == 0
    # two answers per arm: no interval (whole answers are resampled; core.uncertainty.MIN_CLUSTERS)
    assert shown["abs_diff_ci"] == [None, None]
    test = figures["tests"]["abs_diff"]
    assert test["difference"] == pytest.approx(-2.5) and test["difference_ci"] == [None, None]
    # the same labels on three times as many answers: six per arm, intervals from whole answers
    more = [{**label, "response": label["response"] + 10 * copy} for copy in range(3) for label in labels]
    bigger = anchoring_figures(more, seed=3)
    low, high = bigger["arms"]["shown"]["abs_diff_ci"]
    assert 0 <= low <= 0.5 <= high <= 1
    assert bigger["tests"]["abs_diff"]["difference_ci"][1] < 0  # the interval excludes no difference
    # 8 labels split 4/4: the most extreme split has permutation probability 2/70, so p is small but not 0.
    assert 0 < test["p_value"] < 0.05
    assert anchoring_figures(labels, seed=3) == figures  # seeded: repeatable
    # No difference at all: p = 1.
    same = [{**label, "shown": i % 2 == 0} for i, label in enumerate(labels[:4] * 2)]
    for i, label in enumerate(same):
        label.update(response=100 + i, expert=5, judge=5)
    assert anchoring_figures(same)["tests"]["abs_diff"]["p_value"] == 1


def test_empty_and_one_sided_inputs_do_not_crash():
    assert anchoring_figures([])["arms"]["shown"]["abs_diff"] is None
    one = anchoring_figures([{"response": 1, "rater": 1, "expert": 2, "judge": 3, "shown": True}])
    assert one["arms"]["shown"]["abs_diff"] == 1 and one["arms"]["shown"]["abs_diff_ci"] == [None, None]
    assert one["tests"]["abs_diff"]["p_value"] is None


# --- the labelling screen -----------------------------------------------------------------------

@pytest.fixture
def experiment(db):
    """A blind exam running the experiment with judge 'anchor-judge'; eight annotators assigned to
    two responses each; the judge scored each response."""
    question, responses = labelled_setup(2)
    people = [make_user(f"anch-{i}", "annotator") for i in range(8)]
    # The arm is a hash of (seed, answer id, annotator id), and ids differ from run to run (PostgreSQL
    # sequences): one fixed seed put all eight in one arm about once in 128 runs. The first seed that
    # splits the eight on both answers.
    seed = next(s for s in range(11, 1000)
                if all(len({anchor_shown(s, r.pk, u.pk) for u in people}) == 2 for r in responses))
    Exam.objects.filter(pk=question.exam_id).update(anchoring=True, anchoring_seed=seed, anchoring_setting="anchor-judge")
    setting = JudgeSetting.objects.create(name="anchor-judge", version=1, kind=JudgeSetting.Kind.EXTERNAL, model="m")
    make_results(setting, responses, [6, 2])
    services.assign_responses(responses=Response.objects.filter(pk__in=[r.pk for r in responses]),
                              annotators=people, per_response=8, strategy="round_robin")
    responses = list(Response.objects.select_related("question__exam").filter(pk__in=[r.pk for r in responses]))
    return {"question": question, "responses": responses, "people": people, "config": setting, "seed": seed}


def _page(user, response):
    client = Client()
    client.force_login(user)
    page = client.get(reverse("annotation:label", args=[response.pk]))
    assert page.status_code == 200
    return page.content.decode()


def test_only_the_shown_half_sees_the_judge_score(experiment):
    response = experiment["responses"][0]
    arms = {user.pk: anchor_shown(experiment["seed"], response.pk, user.pk) for user in experiment["people"]}
    assert set(arms.values()) == {True, False}, "the seed should split these eight annotators"
    for user in experiment["people"]:
        html = _page(user, response)
        if arms[user.pk]:
            assert 'id="anchor-score"' in html and '<strong id="anchor-value">6</strong>' in html
        else:
            assert 'id="anchor-score"' not in html and "anchor-judge" not in html
        assert 'id="blind-note"' in html and 'id="other-labels"' not in html  # otherwise still blind


def test_exam_without_experiment_shows_nothing(experiment):
    Exam.objects.update(anchoring=False)
    for user in experiment["people"]:
        assert 'id="anchor-score"' not in _page(user, experiment["responses"][0])


def test_submission_records_the_arm_and_the_agreement_page_reports_it(experiment, reviewer_client):
    for response in experiment["responses"]:
        for i, user in enumerate(experiment["people"]):
            services.save_label(response=response, user=user, data=full_label(3, i % 4), base_version=0, submit=True)
    labels = Label.objects.filter(submitted=True)
    assert labels.count() == 16
    for label in labels:
        record = label.anchoring
        assert record["shown"] == anchor_shown(experiment["seed"], label.response_id, label.annotator_id)
        assert record["setting"] == "anchor-judge" and record["seed"] == experiment["seed"]
        assert record["score"] == (6 if label.response_id == experiment["responses"][0].pk else 2)
    page = reviewer_client.get(reverse("annotation:agreement"))
    html = page.content.decode()
    assert 'id="anchoring-table"' in html and "permutation" in html
    figures = page.context["anchoring"]["figures"]
    assert figures["arms"]["shown"]["n_labels"] + figures["arms"]["hidden"]["n_labels"] == 16
    assert figures["arms"]["shown"]["n_labels"] == sum(label.anchoring["shown"] for label in labels)


def test_agreement_page_without_experiment_has_no_section(reviewer_client):
    labelled_setup(1)
    page = reviewer_client.get(reverse("annotation:agreement"))
    assert page.status_code == 200 and 'id="anchoring"' not in page.content.decode()
