"""The LLM meta-evaluator: the real openai client against the scripted server in tests/llm_server.py.

Good JSON becomes a proposal; garbage is kept raw and marked unreadable; a failing endpoint is
marked failed; nothing crashes. A person then confirms or changes, and the kept rate follows.
"""
import json

import pytest

from grading.models import LlmEndpoint, MetaEvalProposal, MetaEvalRun, MetaEvaluation
from grading.review import selectors as sel
from grading.review import services
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold
from tests.judges.conftest import llm_server  # noqa: F401  (the loopback server fixture)
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


def _answer(code, analysis):
    return json.dumps({
        "model_score": 8, "gt_score": 5, "score_diff": 3, "analysis": analysis,
        "primary_category_code": code, "primary_category_name": "whatever",
        "ood_details": {"is_ood": False, "justification": "", "suggested_new_category": None},
    })


@pytest.fixture
def server(llm_server):  # noqa: F811 - the imported fixture, asked for by name
    return llm_server


@pytest.fixture
def setup(settings, server):
    settings.LLM_RETRY_BASE_SECONDS = 0.01
    settings.LLM_RETRY_MAX_SECONDS = 0.02
    question = make_question("Prove the inequality for all real $x$.", location="3-09")
    responses = make_responses(question, 5, source="human", start=700)  # "Answer 700: ..." .. "Answer 704: ..."
    set_gold(responses, [5, 5, 5, 5, 5])
    setting = make_stored_setting("judge-under-study")
    results = make_results(setting, responses, [8, 2, 9, 1, 5])  # the last is not in the queue
    endpoint = LlmEndpoint.objects.create(name="local", base_url=server.url, api_key_env="", max_attempts=2,
                                          timeout_seconds=10)
    return {"config": setting, "results": results, "endpoint": endpoint}


def _start(setup, django_capture_on_commit_callbacks, **kwargs):
    with django_capture_on_commit_callbacks(execute=True):
        return services.start_meta_eval_run(
            endpoint=setup["endpoint"], model="meta-model", scope=sel.Scope(setting=setup["config"]), threshold=2,
            **kwargs,
        )


def test_proposals_garbage_and_failures(setup, server, reviewer, django_capture_on_commit_callbacks):
    server.script("Answer 700:", Reply("```json\n" + _answer("B", "The gold deducts for the missing step.") + "\n```"))
    server.script("Answer 701:", Reply("I would say it is probably category B, but who knows {"))
    server.script("Answer 702:", Reply(status=500), Reply(status=500))
    server.script("Answer 703:", Reply(_answer("c", "Missing case x < 0.")))
    run = _start(setup, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert run.n_items == 4 and run.status == MetaEvalRun.Status.DONE
    progress = sel.meta_eval_run_progress(run)
    assert {k: progress[k] for k in ("done", "ok", "invalid", "error", "fraction")} == {
        "done": 4, "ok": 2, "invalid": 1, "error": 1, "fraction": 1.0}

    by_answer = {p.meta_evaluation.result.response.transcript[:11]: p for p in
                 MetaEvalProposal.objects.select_related("meta_evaluation__result__response")}
    good = by_answer["Answer 700:"]
    assert (good.status, good.category, good.model) == ("ok", "B", "meta-model")
    assert good.analysis == "The gold deducts for the missing step." and good.prompt_tokens > 0
    garbage = by_answer["Answer 701:"]
    assert garbage.status == "invalid" and garbage.category == "" and garbage.raw_output.startswith("I would say")
    failed = by_answer["Answer 702:"]
    assert failed.status == "error" and len(failed.errors) == 2 and "500" in failed.error
    assert by_answer["Answer 703:"].category == "C"
    # the machine never writes a label
    assert not MetaEvaluation.objects.exclude(category="").exists()

    # what was asked: our prompt, the case and the JSON contract, through the openai client
    request = next(r for r in server.requests if "Answer 700:" in r.text)
    assert request.payload["model"] == "meta-model" and request.payload["temperature"] == 0.0
    for part in ("Error severity & follow-through", "primary_category_code", "ood_details", "Answer 700:",
                 "=== Teacher's score ===\n5", "=== Automatic grader's score ===\n8", "rationale 0"):
        assert part in request.text

    # the expert keeps one proposal and changes the other
    results = setup["results"]
    kept = services.confirm_meta_evaluation(results[0], user=reviewer, category="B")
    changed = services.confirm_meta_evaluation(results[3], user=reviewer, category="A")
    assert (kept.proposed_by, kept.kept_proposal, changed.kept_proposal) == ("llm", True, False)
    prelabel = sel.category_summary()["prelabel"]
    assert (prelabel["with_proposal"], prelabel["kept"], prelabel["kept_rate"]) == (2, 1, 0.5)
    assert prelabel["confusion"][1][1] == 1 and prelabel["confusion"][2][0] == 1  # B->B, C->A

    # a second run only asks about the cases still open without a usable proposal
    server.reset()
    server.default = Reply(_answer("E", "Garbled transcript."))
    second = _start(setup, django_capture_on_commit_callbacks)
    assert second.n_items == 2 and server.request_count == 2
    assert sel.queue_stats(sel.disagreement_queue(sel.Scope(setting=setup["config"]), 2))["confirmed"] == 2


def test_refusals(setup):
    from grading.judges.services import RunRefused

    scope = sel.Scope(setting=setup["config"])
    with pytest.raises(RunRefused, match="model"):
        services.start_meta_eval_run(endpoint=setup["endpoint"], model=" ", scope=scope)
    with pytest.raises(RunRefused, match="No case"):
        services.start_meta_eval_run(endpoint=setup["endpoint"], model="m", scope=scope, threshold=50)
    keyed = LlmEndpoint.objects.create(name="keyed", base_url="http://127.0.0.1:9/v1", api_key_env="REALMATH_LLM_KEY_NO_SUCH_VAR")
    with pytest.raises(RunRefused, match="REALMATH_LLM_KEY_NO_SUCH_VAR"):
        services.start_meta_eval_run(endpoint=keyed, model="m", scope=scope)
    assert not MetaEvalRun.objects.exists()


def test_cancelled_run_stops_asking(setup, server, django_capture_on_commit_callbacks):
    run = MetaEvalRun.objects.create(endpoint=setup["endpoint"], model="m", prompt_version="x", n_items=4)
    services.cancel_meta_eval_run(run)
    assert services.process_meta_eval_chunk(run.pk, run.epoch, [r.pk for r in setup["results"]]) == 0
    assert server.request_count == 0


def test_resume_asks_again_what_has_no_answer(setup, server, django_capture_on_commit_callbacks):
    """A run whose worker died before answering, and whose one call failed, is resumed: a new
    epoch, only the open cases are asked, chunks of the old epoch do nothing, the run finishes."""
    server.default = Reply(_answer("B", "Fine."))
    server.script("Answer 702:", Reply(status=500), Reply(status=500))
    with django_capture_on_commit_callbacks(execute=False) as sent:  # the worker never ran
        run = services.start_meta_eval_run(endpoint=setup["endpoint"], model="m", scope=sel.Scope(setting=setup["config"]),
                                           threshold=2)
    assert len(sent) == 1 and run.result_ids == sorted(r.pk for r in setup["results"][:4])
    first, rest = run.result_ids[:2], run.result_ids[2:]
    assert services.process_meta_eval_chunk(run.pk, run.epoch, first, task_id="t1") == 2
    assert services.process_meta_eval_chunk(run.pk, run.epoch, [rest[0]], task_id="t2") == 1  # the failed call
    run.refresh_from_db()
    assert run.status == MetaEvalRun.Status.RUNNING and server.request_count == 4  # 2 + 2 attempts
    assert services.META_EVAL_RUNS.open_ids(run) == rest

    services.cancel_meta_eval_run(run)
    assert sel.meta_eval_run_progress(run)["can_resume"]
    with django_capture_on_commit_callbacks(execute=True):
        resumed = services.resume_meta_eval_run(run)
    resumed.refresh_from_db()
    assert resumed.epoch == run.epoch + 1 and resumed.status == MetaEvalRun.Status.DONE
    assert server.request_count == 6  # the two open cases, once each
    by_result = dict(MetaEvalProposal.objects.filter(run=run).values_list("meta_evaluation__result_id", "status"))
    assert by_result == {pk: "ok" for pk in run.result_ids}
    # a chunk of the old epoch, redelivered late, does nothing
    assert services.process_meta_eval_chunk(run.pk, run.epoch, rest, task_id="t2") == 0
    assert server.request_count == 6
    # nothing open: resuming again changes nothing
    assert services.resume_meta_eval_run(resumed).epoch == resumed.epoch


def test_resume_through_page_and_api(setup, server, reviewer_client, django_capture_on_commit_callbacks):
    from django.urls import reverse

    server.default = Reply(_answer("A", "Gold is off."))
    with django_capture_on_commit_callbacks(execute=False):
        run = services.start_meta_eval_run(endpoint=setup["endpoint"], model="m", scope=sel.Scope(setting=setup["config"]),
                                           threshold=2)
    api = reverse("api-review-meta-eval-run-resume", args=[run.pk])
    assert reviewer_client.post(api).status_code == 409  # still running and not stalled
    page = reviewer_client.get(reverse("grading:review_disagreements"))
    assert reverse("grading:review_meta_eval_run_resume", args=[run.pk]).encode() not in page.content
    services.cancel_meta_eval_run(run)
    page = reviewer_client.get(reverse("grading:review_disagreements"))
    assert reverse("grading:review_meta_eval_run_resume", args=[run.pk]).encode() in page.content
    with django_capture_on_commit_callbacks(execute=True):
        answer = reviewer_client.post(reverse("grading:review_meta_eval_run_resume", args=[run.pk]))
    assert answer.status_code == 302
    run.refresh_from_db()
    assert (run.epoch, run.status, server.request_count) == (2, MetaEvalRun.Status.DONE, 4)
    body = reviewer_client.post(api, {"force": "true"}).json()  # nothing left: stays done
    assert (body["status"], body["epoch"], body["done"]) == ("done", 2, 4)
