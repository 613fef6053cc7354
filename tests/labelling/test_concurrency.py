"""Two people at once: one label saved from the same version by two users, one open slot
claimed by two annotators. Real threads with their own database connections (the same code
runs on SQLite and PostgreSQL in CI)."""
import threading

import pytest
from django.db import connection
from django.utils import timezone

from annotation.labelling import selectors, services
from annotation.models import Assignment, Label, LabelSaveAttempt, Response

from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db(transaction=True)
ROUNDS = 4


def race(*operations):
    """Start the operations together in threads; return ("ok", value) or ("error", exception) each.

    An operation is a callable, or a (prepare, act) pair: `prepare` runs before the start line
    (the page load that precedes a save), `act(prepared)` is what races.
    """
    barrier = threading.Barrier(len(operations))
    results = [None] * len(operations)

    def run(index, operation):
        prepare, act = operation if isinstance(operation, tuple) else (lambda: None, lambda _: operation())
        try:
            prepared = prepare()
            barrier.wait(timeout=10)
            results[index] = ("ok", act(prepared))
        except Exception as exc:  # noqa: BLE001 - the outcome is what the test checks
            results[index] = ("error", exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, op)) for i, op in enumerate(operations)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def save_from(user, label_id, base_version, points):
    """Load the label and its response as the page does, then save from `base_version`."""

    def load():
        label = Label.objects.select_related("response__question__exam").get(pk=label_id)
        return label, selectors.label_page_response(label.response_id)

    def save(loaded):
        label, response = loaded
        return services.save_label(
            response=response, user=user, data=full_label(*points), base_version=base_version, label=label
        )

    return load, save


def test_two_users_save_the_same_label_from_the_same_version(annotator, reviewer):
    _, (response, *_) = labelled_setup(1)
    services.assign_responses(
        responses=Response.objects.all(), annotators=[annotator], per_response=1, strategy="round_robin"
    )
    label = services.save_label(response=response, user=annotator, data=full_label(1, 1), base_version=0).label
    for _ in range(ROUNDS):
        base = Label.objects.get(pk=label.pk).version
        results = race(save_from(annotator, label.pk, base, (2, 2)), save_from(reviewer, label.pk, base, (3, 4)))
        wins = [value for kind, value in results if kind == "ok"]
        losses = [value for kind, value in results if kind == "error"]
        assert len(wins) == 1 and len(losses) == 1, results
        assert isinstance(losses[0], services.LabelConflict), losses[0]
        assert losses[0].current.version == base + 1
        current = Label.objects.get(pk=label.pk)
        assert current.version == base + 1
        assert current.total == wins[0].label.total  # the winner's label, nothing mixed
        assert current.sub_scores == wins[0].label.sub_scores

    attempts = LabelSaveAttempt.objects.filter(label=label).exclude(base_version=0)
    assert sorted(attempts.values_list("outcome", flat=True)) == ["conflict"] * ROUNDS + ["saved"] * ROUNDS
    assert Label.objects.get(pk=label.pk).history.count() == 1 + ROUNDS  # created + one per round
    events = selectors.label_history(Label.objects.get(pk=label.pk))
    outcomes = [e["outcome"] for e in events if e["kind"] == "attempt"]
    assert outcomes.count("conflict") == ROUNDS and outcomes.count("saved") == ROUNDS + 1
    assert {e["who"] for e in events if e["kind"] == "attempt"} == {annotator.username, reviewer.username}


def test_two_annotators_press_next_on_open_slots(annotator, annotator2):
    _, responses = labelled_setup(2 * ROUNDS)
    services.assign_responses(responses=Response.objects.all(), annotators=[], per_response=1, strategy="open")
    handed_out = set()
    for _ in range(ROUNDS):
        results = race(lambda: services.claim_next(annotator), lambda: services.claim_next(annotator2))
        assert all(kind == "ok" and value is not None for kind, value in results), results
        claimed = [value for _, value in results]
        assert claimed[0].pk != claimed[1].pk  # each got a different slot
        assert {claimed[0].lock_holder_id, claimed[1].lock_holder_id} == {annotator.pk, annotator2.pk}
        handed_out |= {a.pk for a in claimed}
        Assignment.objects.filter(pk__in=[a.pk for a in claimed]).update(completed_at=timezone.now())
    assert len(handed_out) == 2 * ROUNDS


def test_last_open_slot_goes_to_exactly_one(annotator, annotator2):
    _, (response, *_) = labelled_setup(1)
    services.assign_responses(responses=Response.objects.all(), annotators=[], per_response=1, strategy="open")
    results = race(lambda: services.claim_next(annotator), lambda: services.claim_next(annotator2))
    claimed = [value for kind, value in results if kind == "ok" and value is not None]
    assert len(claimed) == 1, results
    assert Assignment.objects.get().lock_holder_id == claimed[0].lock_holder_id


def test_two_submissions_at_once_leave_a_gold_from_both_labels(annotator, annotator2):
    _, (response, *_) = labelled_setup(1)
    services.assign_responses(
        responses=Response.objects.all(), annotators=[annotator, annotator2], per_response=2, strategy="round_robin"
    )

    def submit(user, points):
        return (
            lambda: selectors.label_page_response(response.pk),
            lambda loaded: services.save_label(
                response=loaded, user=user, data=full_label(*points), base_version=0, submit=True
            ),
        )

    results = race(submit(annotator, (3, 2)), submit(annotator2, (3, 1)))
    assert all(kind == "ok" for kind, _ in results), results
    response.refresh_from_db()
    assert (response.gold_status, response.gold_score) == ("agreed", 4.5)
