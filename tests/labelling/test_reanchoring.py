"""Step labels survive transcript corrections: anchored by quote and context, re-found after a
change, marked for review only when their quote is gone or ambiguous, never lost."""
import pytest
from django.urls import reverse

from annotation.labelling import services
from annotation.labelling.rules import LabelInvalid
from annotation.models import Label, LabelDraft, Response, StepLabel, content_hash
from annotation.quote_anchors import quote_selector, reanchor
from annotation.transcripts import record_transcript

from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db

TEXT = "First $a=1$. Then we get $b=2$ so $c=3$. Done."


def labelled(annotator, text=TEXT, quotes=("$b=2$",)):
    """A response with `text` whose label has one step label on the first occurrence of each quote."""
    _, (response, *_) = labelled_setup(1)
    Response.objects.filter(pk=response.pk).update(transcript=text, transcript_hash=content_hash(text))
    response.refresh_from_db()
    services.assign_responses(
        responses=Response.objects.filter(pk=response.pk), annotators=[annotator], per_response=1,
        strategy="round_robin",
    )
    steps = [
        {"start": text.index(q), "end": text.index(q) + len(q), "quote": q, "verdict": "logical_gap", "comment": q}
        for q in quotes
    ]
    services.save_label(response=response, user=annotator, data=full_label(step_labels=steps), base_version=0)
    return response


def correct(response, text, user=None):
    return record_transcript(
        question=response.question, student_id=response.student_id, text=text, response=response, user=user
    )


def steps_of(response):
    return list(StepLabel.objects.filter(label__response=response).order_by("pk"))


def on_text(response, step):
    return response.transcript[step.start:step.end]


# --- the pure anchoring -----------------------------------------------------------------------


def test_quote_selector_keeps_context_either_side():
    assert quote_selector("abcdef", 2, 4, context=2) == {"quote": "cd", "prefix": "ab", "suffix": "ef"}
    assert quote_selector("abcdef", 0, 1, context=3) == {"quote": "a", "prefix": "", "suffix": "bcd"}


def test_reanchor_prefers_the_occurrence_whose_context_matches():
    text = "x=1 then y. and x=1 after z."
    assert reanchor(text, "x=1", "and ", " after", 0) == reanchor(text, "x=1", "and ", " after", None)
    assert reanchor(text, "x=1", "and ", " after", 0).start == text.index("and x=1") + 4


def test_reanchor_keeps_the_old_place_when_the_quote_is_still_there():
    assert reanchor("a x=1 d x=1", "x=1", "b ", " c", 2).start == 2


def test_reanchor_without_telling_context_is_ambiguous():
    assert reanchor("x=1 x=1", "x=1", "", "", None) is None
    assert reanchor("gone", "x=1", "", "", 0) is None


# --- corrections through annotation.transcripts ------------------------------------------------


def test_edit_before_the_span_moves_the_label_with_its_text(annotator, reviewer):
    response = correct(labelled(annotator), "Intro. " + TEXT, reviewer)
    (step,) = steps_of(response)
    assert on_text(response, step) == "$b=2$" and not step.needs_review
    assert step.start == TEXT.index("$b=2$") + len("Intro. ")
    assert step.history.first().history_user == reviewer


def test_edit_after_the_span_keeps_the_label_in_place(annotator):
    response = labelled(annotator)
    before = steps_of(response)[0].start
    response = correct(response, TEXT.replace("Done.", "Done, as required."))
    (step,) = steps_of(response)
    assert (step.start, on_text(response, step), step.needs_review) == (before, "$b=2$", False)


def test_edit_inside_the_span_marks_it_for_review_and_keeps_it(annotator):
    response = correct(labelled(annotator), TEXT.replace("$b=2$", "$b=3$"))
    (step,) = steps_of(response)
    assert step.needs_review and step.quote == "$b=2$" and step.comment == "$b=2$"
    assert step.prefix.endswith("we get ") and step.suffix.startswith(" so")


def test_a_deleted_span_is_marked_for_review_not_dropped(annotator):
    response = correct(labelled(annotator, quotes=("$a=1$", "$b=2$")), TEXT.replace("Then we get $b=2$ so ", ""))
    first, second = steps_of(response)
    assert on_text(response, first) == "$a=1$" and not first.needs_review
    assert second.needs_review and second.quote == "$b=2$"
    assert Label.objects.get().step_labels.count() == 2


def test_a_duplicated_quote_is_told_apart_by_its_context(annotator):
    text = "We get $x=1$ here. Later $x=1$ again."
    response = labelled(annotator, text=text, quotes=("$x=1$",))
    (step,) = steps_of(response)
    assert step.start == text.index("$x=1$")
    # A line inserted before both occurrences: offsets alone would land in the wrong place.
    response = correct(response, "Start: $x=1$ too. " + text)
    (step,) = steps_of(response)
    assert on_text(response, step) == "$x=1$" and not step.needs_review
    assert response.transcript[step.start - 7:step.start] == "We get "


def test_a_quote_made_ambiguous_is_marked_for_review(annotator):
    text = "a $x=1$ b"
    # Neither new occurrence is at the old place, and neither keeps more of the old context.
    response = correct(labelled(annotator, text=text, quotes=("$x=1$",)), "cc $x=1$ d $x=1$ e")
    (step,) = steps_of(response)
    assert step.needs_review


def test_submit_after_a_correction_reanchors_the_draft_spans(annotator):
    response = labelled(annotator)
    old = steps_of(response)[0]
    stale = {"start": old.start, "end": old.end, "quote": old.quote, "verdict": "correct", "comment": ""}
    response = correct(response, "A new first line.\n" + TEXT)
    result = services.save_label(
        response=response, user=annotator, data=full_label(step_labels=[stale]), base_version=1, submit=True
    )
    (step,) = result.label.step_labels.all()
    assert result.label.submitted and on_text(response, step) == "$b=2$" and step.verdict == "correct"


def test_submit_refuses_a_quote_that_is_gone_with_a_clear_message(annotator):
    response = labelled(annotator)
    old = steps_of(response)[0]
    stale = {"start": old.start, "end": old.end, "quote": old.quote, "verdict": "correct"}
    response = correct(response, TEXT.replace("$b=2$", "$b=5$"))
    with pytest.raises(LabelInvalid) as exc:
        services.save_label(response=response, user=annotator, data=full_label(step_labels=[stale]), base_version=1)
    assert "no longer in the corrected transcript" in str(exc.value.errors)
    assert steps_of(response)[0].quote == "$b=2$"


def test_a_draft_is_moved_with_its_text(annotator):
    response = labelled(annotator)
    LabelDraft.objects.create(
        response=response, user=annotator, base_version=1,
        payload={"step_labels": [{"start": TEXT.index("$a=1$"), "end": TEXT.index("$a=1$") + 5, "quote": "$a=1$"},
                                 {"start": TEXT.index("$c=3$"), "end": TEXT.index("$c=3$") + 5, "quote": "$c=3$"}]},
    )
    response = correct(response, "Hi. " + TEXT.replace("$c=3$", "$c=4$"))
    first, second = LabelDraft.objects.get().payload["step_labels"]
    assert response.transcript[first["start"]:first["end"]] == "$a=1$" and not first["needs_review"]
    assert second["needs_review"] and second["quote"] == "$c=3$"


def test_label_page_shows_old_and_new_text_of_labels_to_review(annotator, annotator_client):
    response = correct(labelled(annotator), TEXT.replace("$b=2$", "$b=7$"))
    html = annotator_client.get(reverse("annotation:label", args=[response.pk])).content.decode()
    assert 'id="review-steps"' in html and "need your review" in html
    old = html[html.index('class="old-text"'):html.index('class="new-text"')]
    new = html[html.index('class="new-text"'):html.index("</tr>", html.index('class="new-text"'))]
    assert "<mark>$b=2$</mark>" in old and "<mark>$b=7$</mark>" in new


def test_label_page_has_no_review_panel_when_every_label_was_found_again(annotator, annotator_client):
    response = correct(labelled(annotator), "Intro. " + TEXT)
    html = annotator_client.get(reverse("annotation:label", args=[response.pk])).content.decode()
    assert 'id="review-steps"' not in html and 'id="transcript-changed"' in html
