"""Labelling writes: saves with versions, drafts, gold status, assignments, the queue, adjudication."""
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from annotation import selectors
from annotation.labelling import services
from annotation.labelling.rules import LabelInvalid
from annotation.labelling.selectors import adjudication_queue, label_page_response
from annotation.models import Adjudication, Assignment, Label, LabelDraft, LabelSaveAttempt, Response

from ..conftest import make_user
from ..factories import make_imported_gold
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db


def assign(responses, *users, k=1, strategy="round_robin"):
    return services.assign_responses(
        responses=Response.objects.filter(pk__in=[r.pk for r in responses]), annotators=list(users),
        per_response=k, strategy=strategy,
    )


def test_first_save_creates_the_label_then_versions_grow(annotator):
    _, (response, *_) = labelled_setup()
    assign([response], annotator)
    result = services.save_label(response=response, user=annotator, data=full_label(1, 1), base_version=0)
    assert result.created and result.label.version == 1 and result.label.total == 2
    again = services.save_label(response=response, user=annotator, data=full_label(2, 1), base_version=1)
    assert not again.created and again.label.version == 2 and again.label.total == 3
    assert Label.objects.get().history.count() == 2
    assert list(LabelSaveAttempt.objects.values_list("outcome", flat=True)) == ["saved", "saved"]


def test_stale_save_is_refused_and_logged(annotator, reviewer):
    _, (response, *_) = labelled_setup()
    assign([response], annotator)
    services.save_label(response=response, user=annotator, data=full_label(1, 1), base_version=0)
    label = Label.objects.get()
    services.save_label(response=response, user=reviewer, data=full_label(2, 2), base_version=1, label=label)
    with pytest.raises(services.LabelConflict) as exc:
        services.save_label(response=response, user=annotator, data=full_label(3, 3), base_version=1)
    assert exc.value.current.version == 2 and exc.value.current.total == 4
    assert "rev1" in str(exc.value) and "version 1" in str(exc.value)
    label.refresh_from_db()
    assert label.total == 4  # nothing overwritten
    attempt = LabelSaveAttempt.objects.filter(outcome="conflict").get()
    assert (attempt.user, attempt.base_version, attempt.found_version) == (annotator, 1, 2)


def test_annotator_needs_an_assignment(annotator):
    _, (response, *_) = labelled_setup()
    with pytest.raises(services.NotAllowed):
        services.save_label(response=response, user=annotator, data=full_label(), base_version=0)
    assert not Label.objects.exists()


def test_invalid_save_is_refused_and_logged(annotator):
    _, (response, *_) = labelled_setup()
    assign([response], annotator)
    with pytest.raises(LabelInvalid):
        services.save_label(response=response, user=annotator, data=full_label(9, 1), base_version=0)
    assert LabelSaveAttempt.objects.get().outcome == "invalid"


def test_submitted_blind_label_is_read_only_for_its_annotator(annotator, reviewer):
    _, (response, *_) = labelled_setup(blind=True)
    assign([response], annotator)
    services.save_label(response=response, user=annotator, data=full_label(), base_version=0, submit=True)
    with pytest.raises(services.NotAllowed):
        services.save_label(response=response, user=annotator, data=full_label(1, 1), base_version=1)
    label = Label.objects.get()
    services.save_label(response=response, user=reviewer, data=full_label(1, 1), base_version=1, label=label)
    assert Label.objects.get().total == 2


def test_step_labels_are_replaced_with_history(annotator):
    _, (response, *_) = labelled_setup()
    assign([response], annotator)
    step = {"start": 0, "end": 6, "verdict": "logical_gap", "comment": "why?"}
    services.save_label(response=response, user=annotator, data=full_label(step_labels=[step]), base_version=0)
    label = Label.objects.get()
    assert label.step_labels.get().quote == response.transcript[:6]
    services.save_label(
        response=response, user=annotator, data=full_label(step_labels=[{**step, "verdict": "correct"}]), base_version=1
    )
    assert label.step_labels.get().verdict == "correct"
    types = sorted(h.history_type for h in label.step_labels.model.history.all())
    assert types == ["+", "+", "-"]


def test_submission_completes_the_assignment_and_sets_a_single_gold(annotator):
    _, (response, *_) = labelled_setup()
    assign([response], annotator)
    services.save_draft(response=response, user=annotator, payload={"sub_scores": {"(1)": 1}}, base_version=0)
    assert LabelDraft.objects.count() == 1
    services.save_label(response=response, user=annotator, data=full_label(3, 2), base_version=0, submit=True)
    response.refresh_from_db()
    assert (response.gold_score, response.gold_status, response.status) == (5, "single", "labelled")
    assert Assignment.objects.get().completed_at is not None
    assert not LabelDraft.objects.exists()  # the saved label replaces the draft
    assert response.history.first().history_user == annotator


@pytest.mark.parametrize(
    "imported, expert, expected",
    [
        ([], [], (None, "none")),
        ([Decimal(5)], [], (Decimal(5), "imported")),
        ([], [Decimal(4)], (Decimal(4), "single")),
        ([Decimal(5)], [Decimal(4)], (Decimal(5), "agreed")),  # within the threshold: the imported gold stands
        ([], [Decimal(4), Decimal(5)], (Decimal("4.50"), "agreed")),
        ([], [Decimal(4), Decimal(6)], (None, "none")),  # 2 apart: waits for adjudication
        ([Decimal(5)], [Decimal(2)], (Decimal(5), "imported")),
    ],
)
def test_gold_from_totals(imported, expert, expected):
    assert services.gold_from_totals(imported, expert) == expected


def test_two_disagreeing_labels_go_to_adjudication_and_the_reviewer_decides(annotator, annotator2, reviewer):
    _, (response, *_) = labelled_setup()
    assign([response], annotator, annotator2, k=2)
    services.save_label(response=response, user=annotator, data=full_label(3, 4), base_version=0, submit=True)
    services.save_label(response=response, user=annotator2, data=full_label(1, 1), base_version=0, submit=True)
    response.refresh_from_db()
    assert response.gold_status == "none"
    queue = list(adjudication_queue(Decimal(2)))
    assert queue == [response] and queue[0].spread == 5
    with pytest.raises(LabelInvalid) as exc:
        services.adjudicate(response=response, reviewer=reviewer, gold_score=5)
    assert "reason" in exc.value.errors
    chosen = Label.objects.get(annotator=annotator)
    services.adjudicate(response=response, reviewer=reviewer, chosen_label=chosen)
    response.refresh_from_db()
    assert (response.gold_score, response.gold_status, response.status) == (7, "adjudicated", "adjudicated")
    assert Adjudication.objects.get().label_totals == {"ann1": "7.00", "ann2": "2.00"}
    assert list(adjudication_queue(Decimal(2))) == []


def test_adjudication_refuses_when_the_gold_changed_meanwhile(annotator, reviewer):
    _, (response, *_) = labelled_setup()
    seen = (response.gold_score, response.gold_status)
    make_imported_gold([response], total=3)
    Response.objects.filter(pk=response.pk).update(gold_score=3, gold_status="imported")
    with pytest.raises(services.GoldConflict):
        services.adjudicate(response=response, reviewer=reviewer, gold_score=4, reason="x", expected=seen)
    assert not Adjudication.objects.exists()


def test_adjudication_needs_a_reviewer(annotator):
    _, (response, *_) = labelled_setup()
    with pytest.raises(services.NotAllowed):
        services.adjudicate(response=response, reviewer=annotator, gold_score=1, reason="x")


def test_round_robin_and_least_loaded_assignment(annotator, annotator2):
    third = make_user("ann3", "annotator")
    _, responses = labelled_setup(6)
    result = assign(responses, annotator, annotator2, third, k=2)
    assert result.created == 12
    assert result.per_annotator == {"ann1": 4, "ann2": 4, "ann3": 4}
    for response in responses:
        assert len(set(Assignment.objects.filter(response=response).values_list("annotator", flat=True))) == 2
    again = assign(responses, annotator, annotator2, third, k=2)
    assert (again.created, again.already_covered) == (0, 6)

    _, more = labelled_setup(3, statement="Another question")
    Assignment.objects.filter(annotator=annotator).update(completed_at=timezone.now())  # ann1 has no open work
    result = assign(more, annotator, annotator2, third, k=1, strategy="least_loaded")
    assert result.per_annotator == {"ann1": 3}


def test_k_larger_than_the_team_is_reported(annotator):
    _, responses = labelled_setup(2)
    result = assign(responses, annotator, k=2)
    assert (result.created, result.short_of_annotators) == (2, 2)


def test_next_hands_out_own_work_then_open_slots_and_locks_them(annotator, annotator2):
    _, (first, second, third) = labelled_setup(3)
    assign([second], annotator)
    assign([first, third], k=1, strategy="open")
    got = services.claim_next(annotator)
    assert got.response == second and got.lock_holder == annotator
    assert services.claim_next(annotator).pk == got.pk  # pressing again resumes the same one
    services.save_label(response=second, user=annotator, data=full_label(), base_version=0, submit=True)
    open_one = services.claim_next(annotator)
    assert open_one.response == first and open_one.annotator is None
    other = services.claim_next(annotator2)
    assert other.response == third  # first is locked by ann1
    assert services.claim_next(make_user("ann3", "annotator")) is None


def test_expired_lock_returns_an_unstarted_open_slot_to_the_pool(annotator, annotator2):
    _, (response, *_) = labelled_setup(1)
    assign([response], k=1, strategy="open")
    services.claim_next(annotator)
    assert services.claim_next(annotator2) is None
    later = timezone.now() + services.LOCK_TTL + timedelta(seconds=1)
    assert services.claim_next(annotator2, now=later).response == response


def test_started_open_slot_stays_with_its_annotator(annotator, annotator2):
    _, (response, *_) = labelled_setup(1)
    assign([response], k=1, strategy="open")
    services.claim_next(annotator)
    services.save_draft(response=response, user=annotator, payload={"sub_scores": {}}, base_version=0)
    assert Assignment.objects.get().annotator == annotator
    later = timezone.now() + services.LOCK_TTL + timedelta(seconds=1)
    assert services.claim_next(annotator2, now=later) is None


def test_withdraw_leaves_started_work(annotator, annotator2):
    _, responses = labelled_setup(2)
    assign(responses, annotator, annotator2, k=1)
    services.save_draft(response=responses[0], user=annotator, payload={}, base_version=0)
    services.save_label(response=responses[0], user=annotator, data=full_label(), base_version=0)
    deleted = services.withdraw_assignments(responses=Response.objects.all())
    assert deleted == 1
    assert Assignment.objects.get().annotator == annotator


def test_scores_visibility_rule(annotator, annotator2, reviewer):
    _, (blind_response, *_) = labelled_setup(1, blind=True)
    _, (open_response, *_) = labelled_setup(1, exam_name="Open exam", blind=False, statement="open")
    assign([blind_response], annotator)
    blind_response = label_page_response(blind_response.pk)
    assert not selectors.can_see_scores(annotator, blind_response)
    assert selectors.can_see_scores(reviewer, blind_response)
    ids = [blind_response.pk, open_response.pk]
    assert selectors.responses_with_visible_scores(annotator, ids) == {open_response.pk}
    services.save_label(response=blind_response, user=annotator, data=full_label(), base_version=0, submit=True)
    assert selectors.can_see_scores(annotator, blind_response)
    assert selectors.responses_with_visible_scores(annotator, ids) == set(ids)
    assert selectors.responses_with_visible_scores(annotator2, ids) == {open_response.pk}
