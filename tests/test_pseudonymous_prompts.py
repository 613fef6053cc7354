"""Roster names never enter a prompt: answers are named by pseudonymous ids in every request.

A student whose roster id is a real-looking name (and whose roster row carries a name column)
goes through a judge run, a meta-evaluation run and a vision OCR call against the loopback
server; neither the name nor the id appears in any request it received, headers included. The
prompt builders were audited (docs/security.md, "Pseudonymous ids"): they take the question,
the reference, the transcript, scores and rationales, never `student_id`.
"""
import json

import pytest

from egress import purposes, services
from egress.models import ProviderCall
from grading.models import LlmEndpoint
from grading.review import selectors as review_selectors
from grading.review import services as review_services
from ocr import packets
from ocr.models import OcrRun
from tests.factories import make_endpoint, make_question, make_setting, set_gold
from tests.judges.helpers import run_now
from tests.llm_server import LlmServer
from tests.ocr.class_scans import pdf_upload
from tests.ocr.test_redaction import named_pdf

pytestmark = pytest.mark.django_db

STUDENT_ID = "ZhangXiuying-7731"  # the roster's student_id, as a teacher may type it
ROSTER_NAME = "Qiao Feng Uniquename"  # the roster's name column (never stored)


@pytest.fixture
def server(settings, monkeypatch, tmp_path):
    settings.LLM_RETRY_BASE_SECONDS = 0.01
    settings.LLM_RETRY_MAX_SECONDS = 0.02
    settings.LLM_RATELIMIT_DIR = tmp_path / "ratelimit"
    monkeypatch.setenv("REALMATH_LLM_KEY_TEST", "sk-test")
    with LlmServer() as running:
        settings.OCR_VISION_BASE_URL = running.url
        settings.OCR_VISION_MODEL = "test-vision"
        settings.OCR_VISION_API_KEY_ENV = "REALMATH_LLM_KEY_TEST"
        settings.OCR_VISION_MAX_RETRIES = 0
        yield running


def leaks(server):
    """Requests whose body or headers hold the name or the id."""
    found = []
    for request in server.requests:
        seen = json.dumps(request.payload, ensure_ascii=False) + json.dumps(request.headers, ensure_ascii=False)
        if any(secret.lower() in seen.lower() for secret in (STUDENT_ID, ROSTER_NAME, "Xiuying", "Uniquename")):
            found.append(request.path)
    return found


def test_no_roster_name_in_any_request_of_judges_meta_evaluation_and_vision_ocr(
        server, exam_questions, django_capture_on_commit_callbacks):
    exam = exam_questions["exam"]
    # Vision OCR of a class PDF whose roster names the student.
    roster = f"student_id,name\n{STUDENT_ID},{ROSTER_NAME}\n".encode()
    template = json.dumps({"pages_per_student": 2, "pages": {"1": "3-17", "2": "3-18"}}).encode()
    with django_capture_on_commit_callbacks(execute=True):
        batch = packets.ingest_class_pdf(exam=exam, engine="vision", upload=pdf_upload(named_pdf(2)), roster=roster,
                                         template=template, name="3B")
    assert set(OcrRun.objects.filter(page__batch=batch).values_list("status", flat=True)) == {"done"}
    # A judge run on the student's answer (and a classmate's).
    question = make_question("Find all x with $x^2 = 4$.")
    from annotation.models import Response, content_hash

    answers = [Response.objects.create(question=question, source="human", student_id=student, transcript=text,
                                       transcript_hash=content_hash(text))
               for student, text in ((STUDENT_ID, "x = 2 or x = -2"), ("s02", "x = 2"))]
    set_gold(answers, [0, 0])
    setting = make_setting(make_endpoint(server))
    run = run_now(django_capture_on_commit_callbacks, setting)
    assert run.status == "done"
    # The meta-evaluator on the disagreements the run left (the scripted judge gives more than 0).
    endpoint = LlmEndpoint.objects.create(name="meta", base_url=server.url, api_key_env="", max_attempts=2)
    with django_capture_on_commit_callbacks(execute=True):
        meta = review_services.start_meta_eval_run(endpoint=endpoint, model="meta-model",
                                                   scope=review_selectors.Scope(setting=setting), threshold=1)
    meta.refresh_from_db()
    services.flush()
    logged = set(ProviderCall.objects.values_list("purpose", flat=True))
    assert {purposes.VISION_OCR, purposes.JUDGE, purposes.META_EVAL} <= logged
    assert server.count() == ProviderCall.objects.count() >= 6
    assert leaks(server) == []
    # The test can fail: the same check finds the id once it is in a prompt.
    answers[0].transcript = f"My name is {STUDENT_ID}. x = 2"
    answers[0].save()
    run_now(django_capture_on_commit_callbacks, make_setting(make_endpoint(server)))
    assert leaks(server) == ["/v1/chat/completions"]


@pytest.fixture
def exam_questions(db):
    q317 = make_question("Question 3-17: find $a_n$.", exam_name="Scan exam", location="3-17")
    q318 = make_question("Question 3-18: prove $x>0$.", exam_name="Scan exam", location="3-18")
    return {"exam": q317.exam, "3-17": q317, "3-18": q318}
