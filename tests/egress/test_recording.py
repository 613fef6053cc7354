"""The provider-call log is written from what the transport really sent: real openai client, loopback server."""
import pytest
from django.db import DatabaseError

import llm
from egress import purposes, services
from egress.models import ProviderCall
from grading.judges import services as judge_services
from tests.factories import make_endpoint, make_question, make_responses, make_setting
from tests.judges.helpers import run_now
from tests.llm_server import LlmServer, Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    with LlmServer() as running:
        yield running


@pytest.fixture(autouse=True)
def _fast(settings, monkeypatch, tmp_path):
    settings.LLM_RETRY_BASE_SECONDS = 0.01
    settings.LLM_RETRY_MAX_SECONDS = 0.02
    settings.LLM_RATELIMIT_DIR = tmp_path / "ratelimit"
    monkeypatch.setenv("REALMATH_LLM_KEY_TEST", "sk-test")


def test_a_judge_run_logs_each_request_with_its_answer_host_and_sizes(server, django_capture_on_commit_callbacks):
    question = make_question("Find all x with $x^2 = 4$.")
    answers = make_responses(question, 5)
    setting = make_setting(make_endpoint(server))
    server.script(answers[2].transcript, Reply(status=500), Reply("Overall Score: 7"))
    run = run_now(django_capture_on_commit_callbacks, setting)
    assert run.status == "done"
    services.flush()
    calls = list(ProviderCall.objects.order_by("id"))
    assert len(calls) == server.request_count == 6
    assert {c.host for c in calls} == {f"127.0.0.1:{server.port}"}
    assert {c.purpose for c in calls} == {purposes.JUDGE} and {c.path for c in calls} == {"/v1/chat/completions"}
    assert sorted(c.answer_ids[0] for c in calls) == sorted([a.pk for a in answers] + [answers[2].pk])
    assert sorted(c.status for c in calls) == [200] * 5 + [500]
    # The bytes sent are the request bodies the server received; the answers' bodies were counted.
    assert sorted(c.bytes_sent for c in calls) == sorted(int(r.headers["content-length"]) for r in server.requests)
    assert all(c.bytes_received > 20 and c.duration_ms >= 0 and c.started for c in calls)
    # Never the content.
    stored = " ".join(str(v) for c in ProviderCall.objects.values() for v in c.values())
    assert "x^2" not in stored and "Answer" not in stored and "Overall Score" not in stored


def test_a_refused_connection_is_logged_without_a_status(settings):
    endpoint = llm.EndpointSpec(key="gone", base_url="http://127.0.0.1:9/v1", max_attempts=1, timeout=2)
    with llm.labelled(purposes.CONNECTION_CHECK), pytest.raises(llm.LlmCallFailed):
        llm.complete(endpoint, llm.CallSpec(model="m"), [{"role": "user", "content": "hi"}])
    services.flush()
    (call,) = ProviderCall.objects.all()
    assert call.host == "127.0.0.1:9" and call.status == 0 and call.error and call.purpose == purposes.CONNECTION_CHECK


def test_the_endpoint_test_button_is_labelled(server):
    endpoint = make_endpoint(server)
    assert judge_services.test_endpoint(endpoint)["models"] == ["test-model"]
    services.flush()
    (call,) = ProviderCall.objects.all()
    assert (call.purpose, call.method, call.path, call.status) == (purposes.CONNECTION_CHECK, "GET", "/v1/models", 200)


def test_an_observer_that_fails_never_fails_the_call(server, monkeypatch):
    def broken(record):
        raise RuntimeError("the log is broken")

    monkeypatch.setattr(llm.observe, "_observer", broken)
    endpoint = llm.EndpointSpec(key="ok", base_url=server.url)
    done = llm.complete(endpoint, llm.CallSpec(model="m"), [{"role": "user", "content": "hi"}])
    assert done.text and server.request_count == 1


def test_a_write_that_fails_keeps_the_records_for_the_next(server, monkeypatch):
    endpoint = llm.EndpointSpec(key="ok", base_url=server.url)
    with llm.labelled(purposes.JUDGE, answer_ids=[41]):
        llm.complete(endpoint, llm.CallSpec(model="m"), [{"role": "user", "content": "hi"}])
    original = ProviderCall.objects.bulk_create

    def failing(*args, **kwargs):
        raise DatabaseError("disk full")

    monkeypatch.setattr(ProviderCall.objects, "bulk_create", failing)
    assert services.flush() == 0 and services.pending() == 1
    monkeypatch.setattr(ProviderCall.objects, "bulk_create", original)
    assert services.flush() == 1
    assert list(ProviderCall.objects.values_list("purpose", "answer_ids")) == [(purposes.JUDGE, [41])]


def test_calls_of_a_celery_task_are_written_when_it_ends(server, django_capture_on_commit_callbacks):
    """No explicit flush: the eager chunk task's end (task_postrun) writes them."""
    question = make_question("Find all x with $x^2 = 4$.")
    make_responses(question, 3)
    run_now(django_capture_on_commit_callbacks, make_setting(make_endpoint(server)))
    assert ProviderCall.objects.filter(purpose=purposes.JUDGE).count() == 3 and services.pending() == 0


def test_probe_and_generation_calls_are_labelled_with_their_purpose(server, django_capture_on_commit_callbacks):
    from grading.generation import services as generation
    from tests.studies.helpers import FAIR, finished_run, make_answers

    question = make_question("Solve $2x = 2$.")
    answers = make_answers(question, 2)
    endpoint = make_endpoint(server)
    server.default = FAIR
    finished_run(make_setting(endpoint), names=["drop-final-answer"])
    services.flush()
    probe_calls = list(ProviderCall.objects.filter(purpose=purposes.PROBE))
    assert probe_calls and {i for c in probe_calls for i in c.answer_ids} == {a.pk for a in answers}
    assert ProviderCall.objects.count() == server.request_count  # every request, each with its purpose
    server.default = lambda payload: Reply("$x = 1$. Answer: $\\boxed{1}$")
    run = generation.start_generation_run(endpoint=endpoint, questions=type(question).objects.filter(pk=question.pk),
                                          models=["m"], temperatures=[0.0], per_cell=2, enqueue=False)
    generation.run_generation_inline(run)
    services.flush()
    assert ProviderCall.objects.filter(purpose=purposes.GENERATION).count() == 2
    assert not ProviderCall.objects.filter(purpose="").exists()
