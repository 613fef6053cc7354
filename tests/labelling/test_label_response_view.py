"""The labelling page (annotation.labelling.views.label_response, /label/<pk>/): login and roles, blind mode, what it carries, ?by_question= steps, flat query counts."""
import pytest
from django.urls import reverse

from annotation.labelling import selectors, services
from annotation.models import LabelDraft, Response

from ..factories import make_imported_gold, make_responses
from .conftest import assign, config_of, count_queries
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db


def test_anonymous_is_sent_to_login(client):
    _, (response, *_) = labelled_setup(1)
    page = client.get(reverse("annotation:label", args=[response.pk]))
    assert page.status_code == 302 and "/accounts/login/" in page["Location"]


def test_unassigned_annotator_gets_403(annotator_client):
    _, (response, *_) = labelled_setup(1)
    assert annotator_client.get(reverse("annotation:label", args=[response.pk])).status_code == 403


def test_user_without_role_gets_403(client, django_user_model):
    _, (response, *_) = labelled_setup(1)
    client.force_login(django_user_model.objects.create_user("nobody", password="x-long-password"))
    assert client.get(reverse("annotation:label", args=[response.pk])).status_code == 403


def test_missing_response_is_404(reviewer_client):
    assert reviewer_client.get(reverse("annotation:label", args=[999999])).status_code == 404


def test_assigned_annotator_gets_the_page_with_rubric_and_transcript(annotator_client, annotator):
    question, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    page = annotator_client.get(reverse("annotation:label", args=[response.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'class="checkpoint"' in html and "Keyboard" in html and response.transcript in html
    config = config_of(page)
    assert [g["label"] for g in config["groups"]] == ["(1)", "(2)"]
    assert [c["points"] for c in config["groups"][1]["checkpoints"]] == ["2.00", "4.00"]
    assert config["label"] is None and config["editable"] is True
    assert config["urls"]["save"] == reverse("api-my-label", args=[response.pk])


def test_student_text_is_escaped(annotator_client, annotator):
    _, (response, *_) = labelled_setup(1)
    Response.objects.filter(pk=response.pk).update(transcript='<script>alert("x")</script> $x$')
    assign([response], annotator)
    html = annotator_client.get(reverse("annotation:label", args=[response.pk])).content.decode()
    assert '<script>alert("x")</script>' not in html
    assert "&lt;script&gt;alert" in html


def test_blind_annotator_sees_no_other_label_or_gold_until_submitting(annotator_client, annotator, annotator2):
    _, (response, *_) = labelled_setup(1, blind=True)
    make_imported_gold([response], total=6)
    Response.objects.filter(pk=response.pk).update(gold_score=6, gold_status="imported")
    assign([response], annotator, annotator2, k=2)
    services.save_label(response=response, user=annotator2, data=full_label(1, 1, comment="secret-note"), base_version=0, submit=True)
    url = reverse("annotation:label", args=[response.pk])
    html = annotator_client.get(url).content.decode()
    assert "other-labels" not in html and "secret-note" not in html and 'id="blind-note"' in html
    assert "gold-score" not in html
    services.save_label(response=response, user=annotator, data=full_label(3, 3), base_version=0, submit=True)
    html = annotator_client.get(url).content.decode()
    assert 'id="other-labels"' in html and "ann2" in html and "(imported)" in html
    assert 'id="read-only-note"' in html  # submitted on a blind exam: read-only for its annotator


def test_open_exam_shows_other_labels_at_once(annotator_client, annotator, annotator2):
    _, (response, *_) = labelled_setup(1, blind=False, exam_name="Open")
    assign([response], annotator, annotator2, k=2)
    services.save_label(response=response, user=annotator2, data=full_label(1, 1), base_version=0, submit=True)
    html = annotator_client.get(reverse("annotation:label", args=[response.pk])).content.decode()
    assert 'id="other-labels"' in html and "ann2" in html


def test_reviewer_edits_someone_elses_label(reviewer_client, annotator):
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    label = services.save_label(response=response, user=annotator, data=full_label(), base_version=0).label
    page = reviewer_client.get(reverse("annotation:label", args=[response.pk]) + f"?annotation={label.pk}")
    config = config_of(page)
    assert config["label"]["id"] == label.pk and config["editable"]
    assert config["urls"]["save"] == reverse("annotation-detail", args=[label.pk])


def test_server_draft_is_handed_to_the_page(annotator_client, annotator):
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    services.save_draft(response=response, user=annotator, payload={"sub_scores": {"(1)": "2"}}, base_version=0)
    config = config_of(annotator_client.get(reverse("annotation:label", args=[response.pk])))
    assert config["draft"]["payload"] == {"sub_scores": {"(1)": "2"}}
    assert LabelDraft.objects.count() == 1


def test_labelling_page_query_count_is_flat(annotator_client, annotator, annotator2):
    question, first = labelled_setup(5, blind=False, exam_name="Open")
    assign(first, annotator, annotator2, k=2)
    for response in first:
        services.save_label(response=response, user=annotator2, data=full_label(step_labels=[
            {"start": 0, "end": 3, "verdict": "correct"}]), base_version=0, submit=True)
    services.save_label(response=first[2], user=annotator, data=full_label(), base_version=0)
    small = count_queries(annotator_client, reverse("annotation:label", args=[first[2].pk]))

    more = make_responses(question, 1000, start=100)
    make_imported_gold(more)
    assign(more, annotator, annotator2, k=2)
    for response in more[:50]:
        services.save_label(response=response, user=annotator2, data=full_label(step_labels=[
            {"start": 0, "end": 3, "verdict": "correct"}, {"start": 4, "end": 6, "verdict": "other"}]),
            base_version=0, submit=True)
    services.save_label(response=more[500], user=annotator, data=full_label(), base_version=0)
    large = count_queries(annotator_client, reverse("annotation:label", args=[more[500].pk]))
    assert small == large


def test_scanned_pages_are_shown_to_reviewers_and_assigned_annotators(reviewer, annotator):
    from django.test import Client

    from ocr.models import Page, ScanBatch, ScanFile

    reviewer_client, annotator_client = Client(), Client()
    reviewer_client.force_login(reviewer)
    annotator_client.force_login(annotator)
    question, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    batch = ScanBatch.objects.create(name="b", exam=question.exam, engine="tesseract")
    source = ScanFile.objects.create(batch=batch, original_name="a.png", status="accepted")
    page = Page.objects.create(batch=batch, source_file=source, checksum="c" * 64, master="m.png", width=10, height=10,
                               response=response, page_number=1)
    html = reviewer_client.get(reverse("annotation:label", args=[response.pk])).content.decode()
    assert 'id="scan-viewer"' in html and reverse("ocr:page_image", args=[page.pk, "web"]) in html
    # ocr.views.page_image serves annotators the pages of responses assigned to them.
    html = annotator_client.get(reverse("annotation:label", args=[response.pk])).content.decode()
    assert 'id="scan-viewer"' in html and reverse("ocr:page_image", args=[page.pk, "web"]) in html


def test_reviewer_grades_every_response_of_the_question(reviewer_client, reviewer):
    question, responses = labelled_setup(3)
    assert selectors.class_of_question(reviewer, question.pk).count() == 3
    page = reviewer_client.get(reverse("annotation:label", args=[responses[1].pk]) + f"?by_question={question.pk}")
    assert "student 2 of 3" in page.content.decode()


def test_a_by_question_for_another_question_is_ignored(annotator, annotator_client):
    question, responses = labelled_setup(2)
    assign(responses, annotator)
    page = annotator_client.get(reverse("annotation:label", args=[responses[0].pk]) + "?by_question=999")
    assert 'id="class-position"' not in page.content.decode() and config_of(page)["urls"]["next"] is None


def test_students_come_in_natural_order_and_previous_keeps_its_place(annotator, annotator_client):
    """Student 2 follows student 1, not student 10; the first student has a disabled Previous in
    the same place as the others' Previous."""
    question, responses = labelled_setup(3)
    for response, student in zip(responses, ["student 10", "student 2", "student 1"]):
        Response.objects.filter(pk=response.pk).update(student_id=student)
    assign(responses, annotator)
    ordered = selectors.class_ids(annotator, question.pk)
    assert ordered == [responses[2].pk, responses[1].pk, responses[0].pk]
    assert selectors.first_to_grade(annotator, question.pk) == responses[2].pk
    first = annotator_client.get(reverse("annotation:label", args=[responses[2].pk]) + f"?by_question={question.pk}")
    html = first.content.decode()
    assert "student 1 of 3" in html and 'id="prev-none" disabled' in html
    nav = html[html.index('id="label-nav"'):]
    assert nav.index('id="prev-none"') < nav.index('id="next-student"')
    second = annotator_client.get(reverse("annotation:label", args=[responses[1].pk]) + f"?by_question={question.pk}")
    nav = second.content.decode()[second.content.decode().index('id="label-nav"'):]
    assert nav.index('id="prev-link"') < nav.index('id="next-student"')


def test_previous_and_next_keep_their_place_in_the_plain_queue(annotator, annotator_client):
    """Issue 28 ("Next/Previous change place between answers"), outside the across-the-class mode:
    the first answer of the queue has a disabled Previous where the others have their Previous
    link, always before the Next button."""
    _, responses = labelled_setup(3)
    assign(responses, annotator)
    for response, expected_previous in zip(responses, ["prev-none", "prev-link", "prev-link"]):
        html = annotator_client.get(reverse("annotation:label", args=[response.pk])).content.decode()
        nav = html[html.index('id="label-nav"'):html.index("</span>", html.index('id="label-nav"'))]
        assert f'id="{expected_previous}"' in nav and 'id="next-form"' in nav
        assert nav.index(f'id="{expected_previous}"') < nav.index('id="next-form"')
    first = annotator_client.get(reverse("annotation:label", args=[responses[0].pk])).content.decode()
    assert 'id="prev-none" disabled' in first
    second = annotator_client.get(reverse("annotation:label", args=[responses[1].pk])).content.decode()
    assert reverse("annotation:label", args=[responses[0].pk]) in second[second.index('id="prev-link"'):][:200]
