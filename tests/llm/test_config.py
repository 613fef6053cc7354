"""The `llm` transport is a library: it reads its settings from an LlmConfig the app gives it."""
import subprocess
import sys

import pytest
from django.conf import settings as django_settings
from django.http.request import validate_host as django_validate_host

import llm
from core import llm_settings as llm_config
from llm import access, ratelimit
from llm import config as llm_config_module


def test_importing_the_libraries_loads_no_django_and_no_app():
    code = (
        "import sys, llm, llm.reply_limit, equivalence, equivalence.worker, equivalence.parser\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'rest_framework', 'celery', 'accounts', 'annotation', 'config', 'grading', 'ocr'})\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(django_settings.BASE_DIR), env={"PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"


def test_the_config_follows_the_settings_and_their_changes(settings, tmp_path):
    assert llm_config_module.current() == llm_config.from_settings()
    settings.LLM_ALLOWED_HOSTS = ["llm.example.org"]
    settings.LLM_RETRY_BASE_SECONDS = 0.5
    settings.LLM_RATELIMIT_DIR = tmp_path / "rl"
    settings.REDIS_URL = ""  # the file store (CI's PostgreSQL phase sets a Redis URL)
    current = llm_config_module.current()
    assert current.allowed_hosts == ("llm.example.org",) and current.retry_base_seconds == 0.5
    assert "not in REALMATH_LLM_ALLOWED_HOSTS" in access.url_problem("http://127.0.0.1:9/v1")
    assert ratelimit.default_store().directory == tmp_path / "rl"
    settings.LLM_ALLOWED_HOSTS = []
    assert access.url_problem("http://127.0.0.1:9/v1") == ""


def test_a_fixed_config_and_the_defaults_without_a_host_application():
    try:
        llm.configure(llm.LlmConfig(max_output_chars=10))
        assert access.cap_output("x" * 50)[1] == 50
        assert llm_config_module.current().key_env_allowed == ("OPENAI_API_KEY", "REALMATH_LLM_KEY_*")
        with pytest.raises(TypeError):
            llm.configure()
    finally:
        llm_config.install()
    assert llm_config_module.current() == llm_config.from_settings()


HOSTS = ["example.org", "llm.example.org", "a.b.example.org", "example.org.evil.net", "evilexample.org",
         "127.0.0.1", "[::1]", "[2001:db8::1]", "localhost", "xn--bcher-kva.example", ""]
PATTERNS = [[], ["*"], ["example.org"], [".example.org"], ["LLM.Example.org"], ["127.0.0.1", "[::1]"],
            [".org"], [""], ["localhost", ".example.org"]]


@pytest.mark.parametrize("patterns", PATTERNS)
def test_host_patterns_match_as_djangos_allowed_hosts_do(patterns):
    for host in HOSTS:
        assert access.validate_host(host, patterns) == django_validate_host(host, patterns), (host, patterns)
