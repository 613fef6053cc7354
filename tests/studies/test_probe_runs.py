"""Probe runs against the loopback LLM server: scripted fair and unfair judges, caching, isolation."""
import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Response, content_hash
from grading.models import JudgeResult
from studies import selectors, services
from studies.models import ProbeItem
from tests.factories import make_question, make_setting

from .helpers import FAIR, FOOLED_BY_NOTATION, IGNORES_FINAL, make_answers

pytestmark = pytest.mark.django_db


def answers(question, n=8):
    return make_answers(question, n)


@pytest.fixture
def question(db):
    return make_question()


def probe(setting, names, **kwargs):
    run = services.start_probe_run(setting, probe_names=names, enqueue=False, **kwargs)
    return services.run_inline(run)


def test_a_fair_judge_is_caught_lowering_scores_and_an_unfair_one_is_not(endpoint, llm_server, question):
    answers(question)
    llm_server.default = FAIR
    fair = selectors.run_rates(probe(make_setting(endpoint), ["drop-final-answer"]))["drop-final-answer"]
    assert (fair["n"], fair["detected"], fair["rate"]) == (8, 8, 1.0)
    # one question: no interval, not even Wilson's at a rate of 1 (its answers are not independent)
    assert fair["ci"] is None and fair["ci_note"] == "not estimable: 1 question"
    llm_server.default = IGNORES_FINAL
    unfair = selectors.run_rates(probe(make_setting(endpoint), ["drop-final-answer"]))["drop-final-answer"]
    assert (unfair["n"], unfair["detected"], unfair["rate"]) == (8, 0, 0.0)
    assert unfair["ci"] is None and unfair["ci_note"] == "not estimable: 1 question"


def test_a_judge_fooled_by_notation_is_caught_by_notation_swap(endpoint, llm_server, question):
    answers(question)
    llm_server.default = FOOLED_BY_NOTATION
    fooled = selectors.run_rates(probe(make_setting(endpoint), ["notation-swap"]))["notation-swap"]
    assert (fooled["n"], fooled["rate"]) == (8, 1.0)
    llm_server.default = FAIR
    steady = selectors.run_rates(probe(make_setting(endpoint), ["notation-swap"]))["notation-swap"]
    assert (steady["n"], steady["rate"]) == (8, 0.0)


def test_all_probes_share_one_judgement_of_the_original_and_skip_what_they_cannot_change(
    endpoint, llm_server, question
):
    answers(question, 3)
    Response.objects.create(question=question, student_id="short", transcript="Only words",
                            transcript_hash=content_hash("Only words"))
    llm_server.default = FAIR
    run = probe(make_setting(endpoint), ["all"])
    rates = selectors.run_rates(run)
    assert set(rates) == {"drop-final-answer", "arithmetic-slip", "truncate-last-step", "notation-swap",
                          "reorder-independent-steps"}
    assert rates["drop-final-answer"]["skipped"] == 1
    assert rates["reorder-independent-steps"]["skipped"] == 1  # the x and 3*i lines are independent
    distinct_texts = 4 + run.n_items  # 4 originals, one derived text each
    assert llm_server.request_count <= distinct_texts
    assert not JudgeResult.objects.exists()  # nothing a probe judges becomes a judge result


def test_the_original_reuses_an_existing_judge_result_and_a_rerun_makes_no_call(
    endpoint, llm_server, question, django_capture_on_commit_callbacks
):
    from grading.judges import services as judge_services

    responses = answers(question, 2)
    llm_server.default = FAIR
    setting = make_setting(endpoint)
    judge_services.run_inline(judge_services.start_judge_run(setting, enqueue=False))
    calls = llm_server.request_count
    run = probe(setting, ["drop-final-answer"])
    assert llm_server.request_count == calls + 2  # only the derived texts
    item = run.items.get(derived__response=responses[0])
    assert item.original_result == JudgeResult.objects.get(response=responses[0])
    probe(setting, ["drop-final-answer"])
    assert llm_server.request_count == calls + 2


def test_garbage_output_is_counted_as_failed_not_in_n(endpoint, llm_server, question):
    answers(question, 2)
    llm_server.default = lambda payload: __import__("tests.llm_server", fromlist=["Reply"]).Reply("no score here")
    run = probe(make_setting(endpoint, parse_retries=0), ["drop-final-answer"])
    rates = selectors.run_rates(run)["drop-final-answer"]
    assert (rates["n"], rates["failed"], rates["rate"], rates["ci"]) == (0, 2, None, None)
    assert set(run.items.values_list("state", flat=True)) == {ProbeItem.State.INVALID}


def test_probe_judge_command_json_and_table(endpoint, llm_server, question):
    answers(question, 4)
    llm_server.default = FAIR
    setting = make_setting(endpoint, name="rubric-fair")
    out = StringIO()
    call_command("probe_judge", "--setting", "rubric-fair", "--probe", "drop-final-answer", "--inline",
                 "--format", "json", stdout=out, stderr=StringIO())
    data = json.loads(out.getvalue())
    assert data["drop-final-answer"]["n"] == 4 and data["drop-final-answer"]["rate"] == 1.0
    assert data["drop-final-answer"]["ci"] is None  # one question
    assert data["drop-final-answer"]["ci_note"] == "not estimable: 1 question"
    out = StringIO()
    call_command("probe_judge", "--setting", "rubric-fair", "--probe", "all", "--limit", "2", "--seed", "3",
                 "--inline", "--format", "table", stdout=out, stderr=StringIO())
    assert "notation-swap" in out.getvalue()
    rates = selectors.probe_rates("rubric-fair")
    assert rates == selectors.probe_rates(setting)
    assert rates["drop-final-answer"]["n"] == 4  # the same derived text (whatever the seed) counts once
    assert set(rates["drop-final-answer"]) == {"n", "detected", "rate", "ci", "ci_note", "ci_method", "questions"}


def test_probe_judge_refuses_unknown_probes_and_settings(endpoint):
    from django.core.management.base import CommandError

    make_setting(endpoint, name="known")
    with pytest.raises(CommandError, match="Unknown probe"):
        call_command("probe_judge", "--setting", "known", "--probe", "nope", "--inline", stderr=StringIO())
    with pytest.raises(CommandError, match="No setting"):
        call_command("probe_judge", "--setting", "unknown", "--probe", "all", "--inline", stderr=StringIO())


def test_queued_runs_go_through_celery_chunks(endpoint, llm_server, question, django_capture_on_commit_callbacks):
    answers(question, 3)
    llm_server.default = FAIR
    with django_capture_on_commit_callbacks(execute=True):
        run = services.start_probe_run(make_setting(endpoint), probe_names=["truncate-last-step"])
    run.refresh_from_db()
    assert run.status == "done"
    assert selectors.run_rates(run)["truncate-last-step"]["n"] == 3


def test_deleting_a_response_removes_its_derived_answers_and_items(endpoint, llm_server, question):
    responses = answers(question, 2)
    llm_server.default = FAIR
    run = probe(make_setting(endpoint), ["drop-final-answer"])
    assert run.items.count() == 2
    responses[0].delete()
    assert run.items.count() == 1


def test_the_methods_report_shows_the_probe_rates_of_a_setting(endpoint, llm_server, question):
    from grading.report import document
    from grading.report import selectors as report
    from studies import report_section as studies_report
    from tests.factories import make_results

    responses = answers(question)
    llm_server.default = FAIR
    setting = make_setting(endpoint)
    assert studies_report.probe_rates_for(setting) == {}
    probe(setting, ["drop-final-answer"])
    rates = studies_report.probe_rates_for(setting)
    assert list(rates) == ["drop-final-answer"]  # probes never measured are left out
    assert rates["drop-final-answer"] == selectors.probe_rates(setting)["drop-final-answer"]
    assert (rates["drop-final-answer"]["n"], rates["drop-final-answer"]["detected"]) == (8, 8)
    make_results(setting, responses, [8] * len(responses), key_prefix="report")
    text = document.build(report.report_data(bootstrap=0), "markdown", [studies_report.probes_section])
    assert "No probes run." not in text and "| drop-final-answer | 8 | 8 | 1.000" in text
