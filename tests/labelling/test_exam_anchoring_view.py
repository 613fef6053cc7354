"""The anchoring experiment of an exam (annotation.labelling.views.exam_anchoring, /exams/<pk>/anchoring/): an admin starts, watches and stops it; bad choices are refused."""
import pytest
from django.urls import reverse

from annotation.labelling import services
from annotation.labelling.experiment import anchor_shown
from grading.models import JudgeSetting

from ..factories import make_question, make_responses, make_results
from .helpers import full_label

pytestmark = pytest.mark.django_db


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
