"""manage.py judge_setting add / list / show: the settings page's validation from a script."""
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from grading.judges import selectors
from grading.models import JudgeSetting, LlmEndpoint
from tests.factories import API_KEY_ENV, make_question, make_responses
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


def call(*args):
    out, err = StringIO(), StringIO()
    call_command("judge_setting", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def add(llm_server, name="cli-rubric", *extra):
    return call("add", "--name", name, "--kind", "rubric", "--base-url", llm_server.url, "--model", "judge-model",
                "--format", "json", *extra)


def test_add_makes_endpoint_and_setting_then_list_and_show(llm_server):
    out, _ = add(llm_server, "cli-rubric", "--api-key-env", API_KEY_ENV, "--temperature", "0.2", "--max-tokens", "900")
    row = json.loads(out)
    setting = JudgeSetting.objects.get(name="cli-rubric")
    assert (setting.version, setting.model, setting.temperature, setting.max_tokens) == (1, "judge-model", 0.2, 900)
    assert setting.endpoint.base_url == llm_server.url and setting.endpoint.api_key_env == API_KEY_ENV
    assert row["prompt_hash"] == selectors.prompt_hash(setting) and len(row["prompt_hash"]) == 64
    # A second setting on the same URL and key variable reuses the endpoint; a blank key variable is another one.
    add(llm_server, "cli-second", "--api-key-env", API_KEY_ENV)
    assert JudgeSetting.objects.get(name="cli-second").endpoint == setting.endpoint
    add(llm_server, "cli-keyless", "--api-key-env", "")
    keyless = JudgeSetting.objects.get(name="cli-keyless").endpoint
    assert keyless != setting.endpoint and keyless.api_key_env == "" and "(no key)" in keyless.name
    assert LlmEndpoint.objects.count() == 2

    listed = json.loads(call("list", "--format", "json")[0])
    assert [r["name"] for r in listed] == ["cli-keyless", "cli-rubric", "cli-second"]
    table, _ = call("list")
    assert table.splitlines()[0].split()[:4] == ["name", "version", "kind", "model"]
    assert "cli-rubric" in table and llm_server.url in table

    shown = json.loads(call("show", "cli-rubric")[0])
    assert shown["name"] == "cli-rubric" and shown["temperature"] == 0.2
    assert shown["prompt_template"] and shown["system_prompt"]  # the rubric kind's defaults
    assert "prompt_hash" in call("show", "cli-rubric", "--format", "table")[0]


def test_setting_made_by_the_command_runs(llm_server):
    make_responses(make_question(), 2)
    llm_server.default = Reply("Overall Score: 6")
    add(llm_server, "cli-run", "--api-key-env", API_KEY_ENV)
    out = StringIO()
    call_command("run_judges", "--setting", "cli-run", "--inline", stdout=out)
    assert "ok 2" in out.getvalue()


def test_missing_key_variable_saves_with_a_warning(llm_server, monkeypatch):
    monkeypatch.delenv("REALMATH_LLM_KEY_UNSET", raising=False)
    _, err = add(llm_server, "cli-warn", "--api-key-env", "REALMATH_LLM_KEY_UNSET")
    assert JudgeSetting.objects.filter(name="cli-warn").exists()
    assert "REALMATH_LLM_KEY_UNSET is not set" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--kind", "nonsense"], "kind"),
        (["--kind", "external"], "kind"),
        (["--api-key-env", "DJANGO_SECRET_KEY"], "DJANGO_SECRET_KEY is not an allowed API key variable"),
        (["--api-key-env", "HOME"], "HOME is not an allowed API key variable"),
        (["--api-key-env", "sk-abc 123"], "name of an environment variable"),
        (["--base-url", "ftp://example.org/v1"], "http:// or https://"),
        (["--base-url", "not a url"], "http:// or https://"),
        (["--base-url", ""], "--base-url is blank"),
        (["--temperature", "-1"], "temperature"),
        (["--model", ""], "model"),
    ],
)
def test_refusals_save_nothing(llm_server, args, message):
    values = {"--kind": "rubric", "--base-url": llm_server.url, "--model": "m", "--api-key-env": API_KEY_ENV}
    for flag, value in zip(args[::2], args[1::2]):
        values[flag] = value
    argv = ["add", "--name", "refused"] + [x for pair in values.items() for x in pair]
    with pytest.raises(CommandError, match="Refused|blank") as caught:
        call(*argv)
    assert message in str(caught.value)
    assert not JudgeSetting.objects.exists() and not LlmEndpoint.objects.exists()


def test_disallowed_host_is_refused(llm_server, settings):
    settings.LLM_ALLOWED_HOSTS = ["llm.internal"]
    with pytest.raises(CommandError, match="not in REALMATH_LLM_ALLOWED_HOSTS"):
        add(llm_server, "cli-host")
    assert not LlmEndpoint.objects.exists()


def test_duplicate_name_is_refused(llm_server):
    add(llm_server, "cli-dup", "--api-key-env", API_KEY_ENV)
    with pytest.raises(CommandError, match="exists"):
        add(llm_server, "cli-dup", "--api-key-env", API_KEY_ENV)
    assert JudgeSetting.objects.filter(name="cli-dup").count() == 1


def test_show_unknown_name():
    with pytest.raises(CommandError, match="No setting 'nope'"):
        call("show", "nope")


def test_list_is_flat_in_queries(llm_server, django_assert_max_num_queries):
    for i in range(3):
        add(llm_server, f"cli-{i}", "--api-key-env", API_KEY_ENV)
    with django_assert_max_num_queries(2):
        call("list", "--format", "json")


def test_a_kind_without_llm_needs_no_endpoint(db):
    row = json.loads(call("add", "--name", "cli-cas", "--kind", "cas_final_answer", "--format", "json")[0])
    assert row["endpoint"] is None and JudgeSetting.objects.get(name="cli-cas").endpoint is None
    with pytest.raises(CommandError, match="endpoint: This kind of judge calls an LLM"):
        call("add", "--name", "cli-no-endpoint", "--kind", "rubric", "--model", "m")
    assert not JudgeSetting.objects.filter(name="cli-no-endpoint").exists()
