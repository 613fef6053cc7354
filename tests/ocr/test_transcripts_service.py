"""annotation.transcripts: responses created and updated from verified transcripts, history kept."""
import pytest

from annotation.models import Response, content_hash
from annotation.transcripts import TranscriptConflict, record_transcript
from tests.factories import make_question

pytestmark = pytest.mark.django_db


def test_create_then_update_bumps_version_and_keeps_history(reviewer):
    question = make_question()
    response = record_transcript(question=question, student_id="s1", text="v1", user=reviewer, complete=False)
    assert (response.status, response.version, response.transcript_hash) == ("transcribing", 1, content_hash("v1"))
    assert response.extra == {"origin": "scan"}
    same = record_transcript(question=question, student_id="s1", text="v1", response=response, complete=False)
    assert same.version == 1 and response.history.count() == 1
    updated = record_transcript(question=question, student_id="s1", text="v2", response=response, user=reviewer)
    assert (updated.transcript, updated.version, updated.status) == ("v2", 2, "ready")
    history = list(updated.history.order_by("history_date"))
    assert [h.transcript for h in history] == ["v1", "v2"]
    assert history[-1].history_user == reviewer and history[-1].history_change_reason


def test_labelled_status_is_kept_when_text_changes():
    question = make_question()
    response = record_transcript(question=question, student_id="s1", text="v1")
    Response.objects.filter(pk=response.pk).update(status="labelled")
    response.refresh_from_db()
    updated = record_transcript(question=question, student_id="s1", text="v2", response=response)
    assert updated.status == "labelled"


def test_same_text_as_an_existing_response_reuses_it():
    question = make_question()
    existing = record_transcript(question=question, student_id="s1", text="same")
    again = record_transcript(question=question, student_id="s1", text="same")
    assert again.pk == existing.pk and Response.objects.count() == 1


def test_update_that_collides_with_another_response_is_refused():
    question = make_question()
    first = record_transcript(question=question, student_id="s1", text="one")
    second = record_transcript(question=question, student_id="s1", text="two")
    with pytest.raises(TranscriptConflict, match="already has exactly this text"):
        record_transcript(question=question, student_id="s1", text="one", response=second)
    second.refresh_from_db()
    assert second.transcript == "two" and first.transcript == "one"
