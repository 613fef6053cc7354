"""The cost estimate before a run: calls (cache hits and repeats apart, samples fanned out),
input tokens of the real prompts, output tokens from past results or the cap, cost live and
batch; the Start page's JSON, run_judges --dry-run (nothing sent), the run page's estimate vs spent."""
import io
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Response, content_hash
from grading.judges import services
from grading.judges.kinds import get_kind
from grading.judges.services import cost
from grading.models import JudgeResult, JudgeRun, JudgeSetting
from llm import tokens
from tests.factories import make_question, make_responses, make_setting

from .helpers import score_by_answer

pytestmark = pytest.mark.django_db

SYSTEM = "You grade."  # 10 characters: 3 tokens per character rule
TEMPLATE = "Grade: {{ response }}"  # with "Answer i: $x = j$" (17 characters): 24 characters, 6 tokens


@pytest.fixture
def plain_question():
    question = make_question("Find all x with $x^2 = 4$.")
    question.sub_questions.all().delete()  # no sub-question request: the prompt is the template alone
    return question


def priced(endpoint, **fields):
    values = {"model": "local-judge", "system_prompt": SYSTEM, "prompt_template": TEMPLATE, "samples": 2,
              "max_tokens": 300, "parse_retries": 1, "price_input_per_1k": Decimal("1.0"),
              "price_output_per_1k": Decimal("2.0")}
    values.update(fields)
    return make_setting(endpoint, **values)


def test_figures_by_hand_on_four_answers(endpoint, plain_question, settings):
    make_responses(plain_question, 4)
    setting = priced(endpoint)
    e = services.estimate_judge_run(setting)
    # each prompt: system 3 + 3 framing, user 6 + 3 framing, reply 3 = 18 tokens; 4 answers x 2 samples
    assert (e["n_items"], e["cached"], e["same_content"], e["no_call"], e["call_items"]) == (4, 0, 0, 0, 4)
    assert e["calls"] == 8 and e["max_calls"] == 16
    assert e["input_tokens"] == 4 * 18 * 2 == 144
    assert e["token_method"] == "per-character"
    assert (e["output_basis"], e["output_per_call"], e["output_tokens"]) == ("cap", 300, 2400)
    assert e["cost_live"] == "4.9440"  # (144 x 1.0 + 2400 x 2.0) / 1000
    assert e["cost_batch"] == "2.4720"  # x 0.5
    settings.LLM_BATCH_PRICE_FACTOR = 0.4
    assert services.estimate_judge_run(setting)["cost_batch"] == "1.9776"


def test_cache_hits_and_repeats_are_counted_apart(endpoint, plain_question):
    answers = make_responses(plain_question, 4)
    twin = Response.objects.create(question=plain_question, source="human", student_id="twin",
                                   transcript=answers[1].transcript, transcript_hash=content_hash(answers[1].transcript))
    setting = priced(endpoint)
    kind, spec = get_kind(setting.kind), services.judge_spec(setting)
    key = services.input_cache_key(setting, kind, spec, services.judge_input(answers[0]))
    JudgeResult.objects.create(setting=setting, response=answers[0], cache_key=key, status=JudgeResult.Status.OK,
                               completion_tokens=100, samples=[{}, {}], attempts=2)
    # a failed result is no cache hit: its answer is called again
    key2 = services.input_cache_key(setting, kind, spec, services.judge_input(answers[2]))
    JudgeResult.objects.create(setting=setting, response=answers[2], cache_key=key2, status=JudgeResult.Status.ERROR)
    e = services.estimate_judge_run(setting)
    assert (e["n_items"], e["cached"], e["same_content"], e["call_items"], e["calls"]) == (5, 1, 1, 3, 6)
    assert e["input_tokens"] == 3 * 18 * 2
    # the output per call is now the median of the past result, per sample: 100 tokens over 2 samples
    assert (e["output_basis"], e["output_per_call"], e["output_past_results"], e["output_tokens"]) == ("past", 50, 1, 300)
    assert e["cost_live"] == "0.7080"  # (108 + 300 x 2) / 1000
    assert twin.pk in services.selected_ids(setting)
    lines = services.describe_estimate(e)
    assert "1 answer already has a result of this setting version: from the cache, no call." in lines
    assert "1 answer repeats the content of another in the selection: judged once." in lines
    assert not any("need no call" in line or "needs no call" in line for line in lines)


def test_tiktoken_counts_the_prompts_of_openai_models(endpoint, plain_question):
    make_responses(plain_question, 1)
    setting = priced(endpoint, model="gpt-4o-mini", samples=1, price_input_per_1k=0, price_output_per_1k=0)
    e = services.estimate_judge_run(setting)
    encoding = tokens._tiktoken_encoding("o200k_base")
    by_hand = len(encoding.encode(SYSTEM)) + len(encoding.encode("Grade: Answer 0: $x = 0$")) + 3 + 3 + 3
    assert e["token_method"] == "tiktoken o200k_base" and e["input_tokens"] == by_hand
    assert not e["priced"] and e["cost_live"] == "0.0000"
    assert any(line.startswith("No prices set on this setting") for line in services.describe_estimate(e))


def test_large_selections_are_sampled_and_scaled(endpoint, plain_question, monkeypatch):
    make_responses(plain_question, 9)
    monkeypatch.setattr(cost, "EXACT_LIMIT", 4)
    monkeypatch.setattr(cost, "SAMPLE_SIZE", 3)
    e = services.estimate_judge_run(priced(endpoint))
    assert (e["n_items"], e["counted"], e["call_items"], e["calls"], e["input_tokens"]) == (9, 3, 9, 18, 9 * 18 * 2)
    assert any("sample of 3 of the 9 answers" in line for line in services.describe_estimate(e))


def test_a_judge_without_llm_costs_nothing(plain_question):
    make_responses(plain_question, 3)
    setting = make_setting(None, kind=JudgeSetting.Kind.CAS_FINAL_ANSWER, model="")
    e = services.estimate_judge_run(setting)
    assert (e["calls"], e["input_tokens"], e["output_tokens"], e["cost_live"]) == (0, 0, 0, "0.0000")
    assert services.describe_estimate(e) == ["This kind of judge calls no LLM: the run costs nothing."]


def test_bad_input_is_refused_with_a_clear_message(endpoint, plain_question):
    setting = priced(endpoint)
    with pytest.raises(services.RunRefused, match="No response matches this selection"):
        services.estimate_judge_run(setting)
    with pytest.raises(services.RunRefused, match="Choose a judge setting"):
        services.estimate_judge_run(None)


def test_start_page_json(reviewer_client, endpoint, plain_question):
    make_responses(plain_question, 4)
    setting = priced(endpoint)
    url = reverse("grading:judge_run_estimate")
    answer = reviewer_client.get(url, {"config": setting.pk})
    assert answer.status_code == 200
    data = answer.json()
    assert (data["calls"], data["input_tokens"], data["cost_live"], data["cost_batch"]) == (8, 144, "4.9440", "2.4720")
    assert any("max_tokens cap" in line for line in data["assumptions"])
    assert reviewer_client.get(url, {"config": setting.pk, "q": "nothing like this"}).json() == {
        "error": "No response matches this selection."}
    unknown = reviewer_client.get(url, {"config": 999999})
    assert unknown.status_code == 400 and unknown.json()["error"] == "No such judge setting can be run."
    assert reviewer_client.get(url, {"config": "x1"}).status_code == 400
    assert reviewer_client.get(url).json()["error"] == "Choose a judge setting to estimate."
    zh = reviewer_client.get(url, {"config": setting.pk}, HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    assert zh["calls"] == 8  # figures and keys are data; the assumptions follow the reader's language


def test_estimate_needs_a_reviewer(annotator_client, endpoint, plain_question):
    make_responses(plain_question, 1)
    setting = priced(endpoint)
    url = reverse("grading:judge_run_estimate")
    assert Client().get(url, {"config": setting.pk}).status_code == 302
    assert annotator_client.get(url, {"config": setting.pk}).status_code == 403


def test_dry_run_sends_nothing(endpoint, llm_server, plain_question):
    make_responses(plain_question, 4)
    setting = priced(endpoint, name="rubric-dry")
    out = io.StringIO()
    call_command("run_judges", "--setting", "rubric-dry", "--dry-run", stdout=out)
    text = out.getvalue()
    assert "8 calls, 0 from cache, input tokens 144, output tokens 2400, cost live 4.9440, batch 2.4720" in text
    assert "nothing sent" in text and "max_tokens cap" in text
    assert llm_server.request_count == 0 and not JudgeRun.objects.exists()
    assert setting.results.count() == 0
    with pytest.raises(CommandError, match="No response matches"):
        call_command("run_judges", "--setting", "rubric-dry", "--dry-run", "--q", "nothing like this", stdout=out)
    with pytest.raises(CommandError, match="No setting"):
        call_command("run_judges", "--setting", "no-such-setting", "--dry-run", stdout=out)
    assert llm_server.request_count == 0


def test_run_keeps_its_estimate_and_the_page_compares_it_with_what_was_spent(reviewer_client, endpoint, llm_server,
                                                                              plain_question):
    make_responses(plain_question, 3)
    llm_server.default = score_by_answer({})
    setting = priced(endpoint, samples=1, parse_retries=0)
    run = services.start_judge_run(setting, enqueue=False)
    assert (run.estimate["calls"], run.estimate["input_tokens"]) == (3, 3 * 18)
    services.run_inline(run)
    assert llm_server.request_count == 3
    run.refresh_from_db()
    spent = JudgeResult.objects.filter(run=run)
    prompt_tokens = sum(r.prompt_tokens for r in spent)
    page = reviewer_client.get(reverse("grading:judge_run_detail", args=[run.pk]))
    html = page.content.decode()
    assert 'id="est-calls">3<' in html and 'id="s-calls">3<' in html
    assert f'id="est-tin">{3 * 18}<' in html and f'id="s-tin">{prompt_tokens}<' in html
    assert 'id="est-live">' + run.estimate["cost_live"] in html
    assert "max_tokens cap" in html
    api = reviewer_client.get(f"/api/judge-runs/{run.pk}/").json()
    assert api["estimate"]["calls"] == 3 and api["estimate"]["cost_batch"] == run.estimate["cost_batch"]
    # the estimate is made as the run is queued: the run's own results do not count as cache hits
    ids = list(run.items.values_list("response_id", flat=True))
    assert cost.stored_estimate(setting, ids, run=run) == run.estimate
    again = services.estimate_judge_run(setting)
    assert (again["cached"], again["calls"], again["output_basis"]) == (3, 0, "past")
    # a run started before estimates were kept says so
    JudgeRun.objects.filter(pk=run.pk).update(estimate={})
    html = reviewer_client.get(reverse("grading:judge_run_detail", args=[run.pk])).content.decode()
    assert "No estimate was kept for this run" in html


def test_an_estimate_that_fails_never_stops_a_run(endpoint, plain_question, monkeypatch):
    make_responses(plain_question, 2)
    setting = priced(endpoint)

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the estimate")

    monkeypatch.setattr(cost, "_count_calls", broken)
    run = services.start_judge_run(setting, enqueue=False)
    assert run.n_items == 2 and run.estimate == {}


def test_final_answer_judge_counts_an_upper_bound(endpoint, llm_server):
    question = make_question("Find the largest constant $C$ ...", full_score=1, kind="bound",
                             gold_answer="$\\frac{1}{2}$", location="")
    for key, text in {"same": "So the answer is $C = \\frac{1}{2}$", "other": "The answer is $C = 1/3$"}.items():
        Response.objects.create(question=question, source="synthetic", student_id=key, transcript=text,
                                transcript_hash=content_hash(text))
    setting = make_setting(endpoint, kind=JudgeSetting.Kind.INEQ_FINAL_ANSWER)
    e = services.estimate_judge_run(setting)
    # written exactly as the gold: no call; the other may reach the LLM if the CAS cannot decide
    assert (e["n_items"], e["no_call"], e["call_items"], e["calls_upper_bound"]) == (2, 1, 1, True)
    lines = services.describe_estimate(e)
    assert any(line.startswith("An upper bound") for line in lines)
    assert "1 answer needs no call (decided without the LLM, or nothing to send)." in lines
    services.run_inline(services.start_judge_run(setting, enqueue=False))
    assert llm_server.request_count <= e["calls"]  # the real run sends at most the bound
