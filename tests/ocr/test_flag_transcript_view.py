""""Transcript wrong here" (ocr.views.flag_transcript, /ocr/responses/<pk>/flag/): JSON
{start, end, note} from the labelling screen; the annotator assigned the answer and reviewers
may flag, other annotators get 403; a bad body is a 400 with the reason; an unknown id is a 404."""
import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.labelling import services as labelling
from annotation.models import Response
from ocr.models import TranscriptFlag

from .test_scans_beside_labels import CORRECTED, client_of, two_page_response  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


def flag(client, response, body, content_type="application/json"):
    return client.post(reverse("ocr:flag_transcript", args=[response.pk]), data=body, content_type=content_type)


def test_the_assigned_annotator_flags_a_passage_on_its_page(two_page_response, annotator):  # noqa: F811
    response, pages = two_page_response
    labelling.assign_responses(responses=Response.objects.filter(pk=response.pk), annotators=[annotator],
                               per_response=1, strategy="round_robin")
    start = response.transcript.index("$x^2$")
    answer = flag(client_of(annotator), response, json.dumps({"start": start, "end": start + 5, "note": "a cube"}))
    assert answer.status_code == 201
    assert answer.json()["page"] == pages[0].pk and answer.json()["quote"] == "$x^2$"
    stored = TranscriptFlag.objects.get()
    assert (stored.note, stored.flagged_by, stored.page_id) == ("a cube", annotator, pages[0].pk)
    assert CORRECTED[0][stored.page_start:stored.page_end] == "$x^2$"


def test_roles_an_unassigned_annotator_and_the_anonymous_are_refused(two_page_response, annotator, reviewer):  # noqa: F811
    response, _ = two_page_response
    body = json.dumps({"start": 0, "end": 3})
    assert "/accounts/login/" in flag(Client(), response, body)["Location"]
    refused = flag(client_of(annotator), response, body)
    assert refused.status_code == 403 and refused.json()["detail"] == "This response is not assigned to you."
    assert client_of(reviewer).get(reverse("ocr:flag_transcript", args=[response.pk])).status_code == 405
    assert not TranscriptFlag.objects.exists()
    assert flag(client_of(reviewer), response, body).status_code == 201  # reviewers may flag any answer


@pytest.mark.parametrize("body, content_type", [
    ("start=0&end=3", "application/x-www-form-urlencoded"),
    ("{", "application/json"),
    ("[1, 2]", "application/json"),
    (json.dumps({"start": "a", "end": 3}), "application/json"),
    (json.dumps({"start": 5, "end": 500}), "application/json"),
])
def test_a_bad_body_is_a_400_with_the_reason(two_page_response, reviewer, body, content_type):  # noqa: F811
    response, _ = two_page_response
    answer = flag(client_of(reviewer), response, body, content_type)
    assert answer.status_code == 400 and answer.json()["detail"]
    assert not TranscriptFlag.objects.exists()


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_response_is_a_404(reviewer, pk):
    answer = client_of(reviewer).post(f"/ocr/responses/{pk}/flag/", data="{}", content_type="application/json")
    assert answer.status_code == 404
