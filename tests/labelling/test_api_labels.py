"""Labelling API: roles, blind mode (hidden labels as missing ones, hidden fields), versions and conflicts, drafts,
the queue, assignments, agreement and adjudication."""
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.labelling import services
from annotation.models import Adjudication, Assignment, Label, LabelDraft, LabelSaveAttempt, Response

from ..conftest import api_client_for
from ..factories import make_imported_gold
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db


def assign(responses, *users, k=1, strategy="round_robin"):
    services.assign_responses(
        responses=Response.objects.filter(pk__in=[r.pk for r in responses]), annotators=list(users),
        per_response=k, strategy=strategy,
    )


def my_label_url(response):
    return reverse("api-my-label", args=[response.pk])


def test_anonymous_and_roleless_users_are_refused(django_user_model):
    _, (response, *_) = labelled_setup(1)
    anonymous = APIClient()
    assert anonymous.get(my_label_url(response)).status_code in (401, 403)
    assert anonymous.post(reverse("api-label-next")).status_code in (401, 403)
    nobody = api_client_for(django_user_model.objects.create_user("nobody", password="x-long-password"))
    assert nobody.get(my_label_url(response)).status_code == 403
    assert nobody.get(reverse("annotation-list")).status_code == 403


def test_unassigned_annotator_cannot_read_or_write_a_label(annotator):
    _, (response, *_) = labelled_setup(1)
    api = api_client_for(annotator)
    assert api.get(my_label_url(response)).status_code == 403
    assert api.put(my_label_url(response), {"base_version": 0, **full_label()}, format="json").status_code == 403
    assert api.put(reverse("api-label-draft", args=[response.pk]), {"base_version": 0, "payload": {}}, format="json").status_code == 403


def test_save_then_stale_save_gets_409_with_both_versions(annotator, reviewer):
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    api = api_client_for(annotator)
    created = api.put(my_label_url(response), {"base_version": 0, **full_label(1, 1)}, format="json")
    assert created.status_code == 201 and created.data["version"] == 1 and created.data["total"] == "2.00"
    label_id = created.data["id"]
    by_reviewer = api_client_for(reviewer).put(
        reverse("annotation-detail", args=[label_id]), {"base_version": 1, **full_label(2, 2)}, format="json"
    )
    assert by_reviewer.status_code == 200 and by_reviewer.data["version"] == 2
    stale = api.put(my_label_url(response), {"base_version": 1, **full_label(3, 3)}, format="json")
    assert stale.status_code == 409
    assert stale.data["yours"]["base_version"] == 1 and stale.data["yours"]["sub_scores"] == {"(1)": 3, "(2)": 3}
    assert stale.data["theirs"]["version"] == 2 and stale.data["theirs"]["updated_by"] == "rev1"
    assert stale.data["theirs"]["sub_scores"] == {"(1)": 2, "(2)": 2}
    assert "version 1" in stale.data["detail"]
    history = api.get(reverse("annotation-history", args=[label_id]))
    outcomes = [e["outcome"] for e in history.data["events"] if e["kind"] == "attempt"]
    assert sorted(outcomes) == ["conflict", "saved", "saved"]


def test_invalid_label_gets_400_with_field_errors(annotator):
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    api = api_client_for(annotator)
    answer = api.put(my_label_url(response), {"base_version": 0, **full_label(5, 1)}, format="json")
    assert answer.status_code == 400 and "(1): at most 3 points." in answer.data["errors"]["sub_scores"]
    assert api.put(my_label_url(response), {"sub_scores": {}}, format="json").status_code == 400  # no base_version
    assert not Label.objects.exists()
    assert LabelSaveAttempt.objects.get().outcome == "invalid"


def test_blind_mode_in_the_api(annotator, annotator2, reviewer):
    _, (response, *_) = labelled_setup(1, blind=True)
    make_imported_gold([response], total=6)
    Response.objects.filter(pk=response.pk).update(gold_score=6, gold_status="imported")
    assign([response], annotator, annotator2, k=2)
    other = services.save_label(response=response, user=annotator2, data=full_label(), base_version=0, submit=True)
    api = api_client_for(annotator)

    mine = api.get(my_label_url(response)).data
    assert mine["scores_visible"] is False
    assert "others" not in mine and "gold_score" not in mine and "gold_status" not in mine
    assert api.get(reverse("annotation-detail", args=[other.label.pk])).status_code == 404  # as a missing one
    assert api.get(reverse("annotation-history", args=[other.label.pk])).status_code == 404
    assert api.get(reverse("annotation-list"), {"response": response.pk}).data["count"] == 0
    detail = api.get(reverse("response-detail", args=[response.pk])).data
    assert "gold_score" not in detail and "gold_status" not in detail
    assert api.put(
        reverse("annotation-detail", args=[other.label.pk]), {"base_version": 1, **full_label()}, format="json"
    ).status_code == 404

    assert api.put(my_label_url(response), {"base_version": 0, "submit": True, **full_label(1, 1)}, format="json").status_code == 201
    mine = api.get(my_label_url(response)).data
    assert mine["scores_visible"] is True and mine["gold_status"] == "imported"
    assert {o["rater"] for o in mine["others"]} == {"ann2", "(imported)"}
    assert api.get(reverse("annotation-detail", args=[other.label.pk])).status_code == 200
    assert api.get(reverse("annotation-list"), {"response": response.pk}).data["count"] == 3
    assert api_client_for(reviewer).get(reverse("annotation-list"), {"response": response.pk}).data["count"] == 3


def test_imported_labels_are_read_only(reviewer):
    _, (response, *_) = labelled_setup(1)
    (imported,) = make_imported_gold([response], total=4)
    answer = api_client_for(reviewer).put(
        reverse("annotation-detail", args=[imported.pk]), {"base_version": 1, **full_label()}, format="json"
    )
    assert answer.status_code == 403


def test_drafts_round_trip(annotator):
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    api = api_client_for(annotator)
    url = reverse("api-label-draft", args=[response.pk])
    assert api.get(url).status_code == 204
    assert api.put(url, {"base_version": 0, "payload": {"sub_scores": {"(1)": "2"}}}, format="json").status_code == 200
    assert api.get(url).data["payload"] == {"sub_scores": {"(1)": "2"}}
    assert api.put(url, {"base_version": 0, "payload": "nope"}, format="json").status_code == 400
    assert api.delete(url).status_code == 204 and not LabelDraft.objects.exists()


def test_next_claims_and_returns_204_when_done(annotator):
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    api = api_client_for(annotator)
    answer = api.post(reverse("api-label-next"))
    assert answer.status_code == 200 and answer.data["response"] == response.pk and answer.data["lock_holder"] == "ann1"
    services.save_label(response=response, user=annotator, data=full_label(), base_version=0, submit=True)
    assert api.post(reverse("api-label-next")).status_code == 204


def test_assignments_bulk_needs_a_reviewer(annotator, annotator2, reviewer):
    question, responses = labelled_setup(4)
    body = {"question": question.pk, "annotators": ["ann1", "ann2"], "per_response": 2, "strategy": "round_robin"}
    assert api_client_for(annotator).post(reverse("assignment-bulk"), body, format="json").status_code == 403
    answer = api_client_for(reviewer).post(reverse("assignment-bulk"), body, format="json")
    assert answer.status_code == 201 and answer.data["created"] == 8
    assert api_client_for(annotator).get(reverse("assignment-list")).data["count"] == 4
    assert api_client_for(reviewer).get(reverse("assignment-list")).data["count"] == 8
    bad = api_client_for(reviewer).post(reverse("assignment-bulk"), {"annotators": ["ann1"]}, format="json")
    assert bad.status_code == 400
    none = api_client_for(reviewer).post(reverse("assignment-bulk"), {"question": question.pk, "annotators": []}, format="json")
    assert none.status_code == 400 and "annotators" in none.data["errors"]


def test_agreement_api(annotator, annotator2, reviewer):
    question, responses = labelled_setup(3)
    assign(responses, annotator, annotator2, k=2)
    for response, (a, b) in zip(responses, [((3, 4), (3, 4)), ((1, 0), (2, 0)), ((0, 0), (3, 4))]):
        services.save_label(response=response, user=annotator, data=full_label(*a), base_version=0, submit=True)
        services.save_label(response=response, user=annotator2, data=full_label(*b), base_version=0, submit=True)
    assert api_client_for(annotator).get(reverse("api-agreement")).status_code == 403
    report = api_client_for(reviewer).get(reverse("api-agreement"), {"question": question.pk}).data
    # Totals: ann1 7, 1, 0; ann2 7, 2, 7 -> differences 0, 1, 7.
    assert report["raters"] == ["ann1", "ann2"]
    assert report["overall"]["exact"] == pytest.approx(1 / 3)
    assert report["overall"]["within_one"] == pytest.approx(2 / 3)
    assert report["overall"]["mad"] == pytest.approx(8 / 3)
    assert report["pairs"][0]["n"] == 3


def test_adjudication_api(annotator, annotator2, reviewer):
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator, annotator2, k=2)
    services.save_label(response=response, user=annotator, data=full_label(3, 4), base_version=0, submit=True)
    services.save_label(response=response, user=annotator2, data=full_label(0, 1), base_version=0, submit=True)
    assert api_client_for(annotator).get(reverse("api-adjudication-queue")).status_code == 403
    api = api_client_for(reviewer)
    queue = api.get(reverse("api-adjudication-queue")).data
    assert queue["count"] == 1 and queue["results"][0]["spread"] == "6.00"
    assert api.get(reverse("api-adjudication-queue"), {"threshold": "7"}).data["count"] == 0
    assert api_client_for(annotator).post(reverse("adjudication-list"), {"response": response.pk}, format="json").status_code == 403
    missing_reason = api.post(reverse("adjudication-list"), {"response": response.pk, "gold_score": "5"}, format="json")
    assert missing_reason.status_code == 400 and "reason" in missing_reason.data["errors"]
    stale = api.post(
        reverse("adjudication-list"),
        {"response": response.pk, "gold_score": "5", "reason": "r", "expected_gold_score": "7", "expected_gold_status": "single"},
        format="json",
    )
    assert stale.status_code == 409
    done = api.post(
        reverse("adjudication-list"),
        {"response": response.pk, "gold_score": "5", "reason": "Partial credit on (2).", "expected_gold_status": "none"},
        format="json",
    )
    assert done.status_code == 201 and done.data["previous_gold_status"] == "none"
    response.refresh_from_db()
    assert (response.gold_score, response.gold_status) == (5, "adjudicated")
    assert Adjudication.objects.count() == 1
    assert api.get(reverse("api-adjudication-queue")).data["count"] == 0


def test_open_pool_next_via_api(annotator, annotator2):
    _, (response, *_) = labelled_setup(1)
    assign([response], k=1, strategy="open")
    assert api_client_for(annotator).post(reverse("api-label-next")).status_code == 200
    assert api_client_for(annotator2).post(reverse("api-label-next")).status_code == 204
    assert Assignment.objects.get().lock_holder == annotator


def test_draft_without_payload_or_version_is_a_400(annotator):
    # Found by the schema fuzzer: a missing field used to end in a 500.
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    api = api_client_for(annotator)
    url = reverse("api-label-draft", args=[response.pk])
    assert api.put(url, {}, format="json").status_code == 400
    assert api.put(url, {"payload": {}}, format="json").status_code == 400
    assert api.put(url, {"base_version": 0}, format="json").status_code == 400


def test_malformed_requests_get_4xx_not_5xx(annotator):
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    api = api_client_for(annotator)
    assert APIClient().get("/api/labels/abc/").status_code in (401, 403)  # the role check comes first
    assert api.get("/api/labels/abc/").status_code == 404
    assert api.put("/api/labels/0.5/draft/", {"base_version": 0, "payload": {}}, format="json").status_code == 404
    draft_url = reverse("api-label-draft", args=[response.pk])
    assert api.put(draft_url, {"base_version": 0}, format="json").status_code == 400  # no payload
    assert api.put(draft_url, {"payload": {}}, format="json").status_code == 400  # no base version
    label_url = my_label_url(response)
    for body in ({"base_version": "x"}, {"base_version": 0, "sub_scores": []}, {"base_version": 0, "step_labels": [1]},
                 {"base_version": 0, "total": {"a": 1}}, {"base_version": 0, "checkpoint_marks": {"1": 5}}):
        assert api.put(label_url, body, format="json").status_code == 400, body


@pytest.mark.parametrize("version", [2**31, 2**63, 2**64, -1])
def test_a_base_version_out_of_the_columns_range_is_a_400_like_the_drafts(annotator, version):
    """Issue 40, item 7: 2**63 was a 500 on both databases (2**31 on PostgreSQL): the label route's
    base_version had a minimum and no maximum; the draft route's (a model field) was range-checked."""
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    api = api_client_for(annotator)
    created = api.put(my_label_url(response), {"base_version": 0, **full_label(1, 1)}, format="json")
    assert created.status_code in (200, 201)
    for url in (my_label_url(response), reverse("annotation-detail", args=[created.json()["id"]]),
                reverse("api-label-draft", args=[response.pk])):
        answer = api.put(url, {"base_version": version, "payload": {}, **full_label(2, 2)}, format="json")
        assert answer.status_code == 400 and "base_version" in answer.json(), (url, answer.status_code)
    assert Label.objects.get().version == 1


def test_a_body_nested_thousands_deep_or_holding_infinity_is_a_400(annotator):
    """Issue 40, item 8: Python's decoder raises RecursionError on 5,000 levels, which DRF's
    parser let through as a 500 on every write route; the importers' depth guard (100 levels) and
    a number too large for a float (1e999) answer 400 too (core/api_parsers.py)."""
    _, (response, *_) = labelled_setup(1)
    assign([response], annotator)
    api = api_client_for(annotator)
    deep = '{"base_version": 0, "comment": ' + "[" * 5000 + "]" * 5000 + "}"
    nested = '{"base_version": 0, "payload": {"x": ' + "[" * 150 + "]" * 150 + "}}"
    for url in (my_label_url(response), reverse("api-label-draft", args=[response.pk])):
        for body in (deep, nested, '{"base_version": 0, "payload": {"x": 1e999}}', "[" * 5000,
                     '{"base_version": 0, "payload": {"x": "a\\u0000b"}}'):
            answer = api.put(url, body, content_type="application/json")
            assert answer.status_code == 400, (url, body[:60], answer.status_code)
    assert not Label.objects.exists() and not LabelDraft.objects.exists()


def test_huge_or_odd_ids_in_filters_are_ignored(reviewer):
    api = api_client_for(reviewer)
    huge = "9" * 30
    assert api.get(reverse("api-agreement"), {"question": huge, "exam": "٣"}).status_code == 200
    assert api.get(reverse("api-adjudication-queue"), {"question": huge}).status_code == 200
    assert api.get("/api/annotations/0.5/").status_code == 404


def _answer(api, method, url, body=None):
    answer = getattr(api, method)(url, body, format="json") if body is not None else getattr(api, method)(url)
    return answer.status_code, answer.content


def test_a_hidden_label_answers_byte_for_byte_as_a_missing_one(annotator, annotator2):
    """Label ids are no oracle (issue 29, item 4): detail, history, PUT and a draft naming the
    label answer the same for a hidden label, a missing id and a label of another response."""
    _, (response, elsewhere) = labelled_setup(2, blind=True)
    assign([response, elsewhere], annotator, annotator2, k=2)
    hidden = services.save_label(response=response, user=annotator2, data=full_label(), base_version=0, submit=True).label
    foreign = services.save_label(response=elsewhere, user=annotator2, data=full_label(), base_version=0, submit=True).label
    missing = Label.objects.order_by("-pk").first().pk + 1000
    api = api_client_for(annotator)
    for route in ("annotation-detail", "annotation-history"):
        seen = {_answer(api, "get", reverse(route, args=[pk])) for pk in (hidden.pk, missing)}
        assert len(seen) == 1 and next(iter(seen))[0] == 404
    put = {_answer(api, "put", reverse("annotation-detail", args=[pk]), {"base_version": 1, **full_label()})
           for pk in (hidden.pk, missing)}
    assert len(put) == 1 and next(iter(put))[0] == 404

    draft_url = reverse("api-label-draft", args=[response.pk])
    drafts = {_answer(api, "put", draft_url, {"base_version": 0, "payload": {}, "annotation": pk})
              for pk in (hidden.pk, missing, foreign.pk, "x")}
    assert len(drafts) == 1
    status, body = next(iter(drafts))
    assert status == 400 and b"another response" not in body and b"Invalid pk" not in body
    assert not LabelDraft.objects.exists()

    # One's own label still works, and a reviewer still gets the same refusal for another response's label.
    mine = services.save_label(response=response, user=annotator, data=full_label(), base_version=0).label
    assert api.put(draft_url, {"base_version": 1, "payload": {}, "annotation": mine.pk}, format="json").status_code == 200
