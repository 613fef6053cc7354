"""Work records: the active time an expert spends on a label arrives from the browser as
increments with drafts and saves; the server sums them, each bounded by the wall time since the
person's previous draft or save; the agreement page and the export show the sums."""
import csv
import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.export.writers import write_export
from annotation.labelling import selectors, services
from annotation.models import Label, LabelDraft, Response

from ..conftest import api_client_for
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db


@pytest.fixture
def assigned(annotator, annotator2):
    question, responses = labelled_setup(2)
    services.assign_responses(responses=Response.objects.filter(question=question), annotators=[annotator, annotator2],
                              per_response=2, strategy="round_robin")
    return responses


def _age(model, seconds, **where):
    model.objects.filter(**where).update(updated=timezone.now() - timedelta(seconds=seconds))


def test_bounded_increment():
    now = timezone.now()
    assert services.bounded_increment(40, None, now) == 40
    assert services.bounded_increment(10_000, None, now) == services.ACTIVE_INCREMENT_CAP_SECONDS
    assert services.bounded_increment(500, now - timedelta(seconds=100), now) == 100 + services.ACTIVE_SLACK_SECONDS
    assert services.bounded_increment(30, now - timedelta(seconds=100), now) == 30
    assert services.bounded_increment(-5, None, now) == 0 and services.bounded_increment("x", None, now) == 0
    assert services.bounded_increment(30, now + timedelta(seconds=60), now) == services.ACTIVE_SLACK_SECONDS


def test_drafts_and_saves_add_bounded_time_to_the_annotators_label(assigned, annotator, reviewer):
    response = assigned[0]
    api = api_client_for(annotator)
    draft_url = reverse("api-label-draft", args=[response.pk])
    save_url = reverse("api-my-label", args=[response.pk])
    assert api.put(draft_url, {"base_version": 0, "payload": {}, "active_seconds_delta": 40}, format="json").status_code == 200
    assert LabelDraft.objects.get(response=response, user=annotator).active_seconds == 40
    _age(LabelDraft, 100, response=response, user=annotator)
    api.put(draft_url, {"base_version": 0, "payload": {}, "active_seconds_delta": 70}, format="json")
    assert LabelDraft.objects.get(response=response, user=annotator).active_seconds == 110
    _age(LabelDraft, 10, response=response, user=annotator)
    answer = api.put(save_url, {"base_version": 0, **full_label(), "active_seconds_delta": 500}, format="json")
    assert answer.status_code == 201
    assert answer.json()["active_seconds"] == 110 + 10 + services.ACTIVE_SLACK_SECONDS  # the claim of 500 is cut
    assert not LabelDraft.objects.filter(response=response, user=annotator).exists()
    label = Label.objects.get(response=response, annotator=annotator)
    # A reviewer correcting the label adds none of their time to the annotator's.
    services.save_label(response=response, user=reviewer, data=full_label(2, 4), base_version=label.version,
                        label=label, active_seconds_delta=60)
    label.refresh_from_db()
    assert label.active_seconds == 125 and label.version == 2
    # The annotator again, a minute later: counted.
    _age(Label, 60, pk=label.pk)
    services.save_label(response=response, user=annotator, data=full_label(3, 4), base_version=2, active_seconds_delta=45)
    label.refresh_from_db()
    assert label.active_seconds == 170


def test_refused_saves_add_nothing_and_bad_increments_are_refused(assigned, annotator):
    response = assigned[0]
    api = api_client_for(annotator)
    save_url = reverse("api-my-label", args=[response.pk])
    bad = api.put(save_url, {"base_version": 0, **full_label(), "active_seconds_delta": -3}, format="json")
    assert bad.status_code == 400 and not Label.objects.filter(annotator=annotator).exists()
    api.put(save_url, {"base_version": 0, **full_label(), "active_seconds_delta": 20}, format="json")
    stale = api.put(save_url, {"base_version": 0, **full_label(1, 1), "active_seconds_delta": 20}, format="json")
    assert stale.status_code == 409
    assert Label.objects.get(annotator=annotator).active_seconds == 20


def test_agreement_page_and_export_show_the_time(assigned, annotator, annotator2, reviewer_client, tmp_path):
    for response, (first, second) in zip(assigned, [(300, 120), (60, 0)]):
        for user, seconds in ((annotator, first), (annotator2, second)):
            services.save_label(response=response, user=user, data=full_label(), base_version=0, submit=True,
                                active_seconds_delta=seconds)
    work = selectors.work_time()
    people = {p["key"]: p for p in work["people"]}
    assert (people["ann1"]["seconds"], people["ann1"]["timed"], people["ann1"]["median_seconds"]) == (360, 2, 180)
    assert (people["ann2"]["seconds"], people["ann2"]["labels"], people["ann2"]["timed"]) == (120, 2, 1)
    (question,) = work["questions"]
    assert (question["seconds"], question["labels"], question["total_text"]) == (480, 4, "8 min 00 s")
    page = reviewer_client.get(reverse("annotation:agreement")).content.decode()
    table = page.split('id="work-people"', 1)[1].split("</table>", 1)[0]
    assert 'data-seconds="360">6 min 00 s' in table and 'data-seconds="120">2 min 00 s' in table
    assert "question #" in page.split('id="work-questions"', 1)[1].split("</table>", 1)[0]

    write_export(Response.objects.all(), "jsonl", tmp_path / "jsonl")
    lines = [json.loads(line) for line in (tmp_path / "jsonl" / "dataset.jsonl").read_text().splitlines()]
    exported = sorted(a["active_seconds"] for line in lines if line["type"] == "response" for a in line["annotations"])
    assert exported == [0, 60, 120, 300]
    write_export(Response.objects.all(), "csv", tmp_path / "csv")
    with open(tmp_path / "csv" / "annotations.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(int(r["active_seconds"]) for r in rows if r["rater"] == "ann1") == [60, 300]


def test_duration_text():
    assert [selectors.duration_text(s) for s in (None, 0, 59, 61, 3599, 3600, 7620)] == [
        "—", "0 s", "59 s", "1 min 01 s", "59 min 59 s", "1 h 00 min", "2 h 07 min"]
