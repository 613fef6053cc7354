"""Hardening from the environment, checked in fresh processes (as production starts them):
`check --deploy` clean with the documented production variables, secure defaults, private files."""
import json
import os
import secrets
import stat
import subprocess
import sys

import pytest
from django.test import Client

from .conftest import ROOT

# The production variables documented in docs/security.md.
PRODUCTION = {
    "DJANGO_SECRET_KEY": "set-below",
    "DJANGO_ALLOWED_HOSTS": "realmath.example.org",
    "DJANGO_HTTPS": "1",
    "DJANGO_HSTS_PRELOAD": "1",
    "DJANGO_PROXY_COUNT": "1",
}
SHOWN = [
    "DEBUG", "ALLOWED_HOSTS", "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD", "SECURE_PROXY_SSL_HEADER",
    "TRUSTED_PROXY_COUNT", "SESSION_COOKIE_HTTPONLY", "X_FRAME_OPTIONS",
]


def run(args, var_dir, **env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "REALMATH_", "DATABASE_URL"))}
    clean.update(REALMATH_VAR_DIR=str(var_dir), PYTHONPATH=str(ROOT), **env)
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=180,
        preexec_fn=lambda: os.umask(0o022),  # the usual umask: files would be world-readable by default
    )


def settings_in_process(var_dir, **env):
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{k: getattr(settings, k, None) for k in {SHOWN!r}}}))"
    )
    result = run(["-c", code], var_dir, DJANGO_SETTINGS_MODULE="config.settings", **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def production_env():
    return {**PRODUCTION, "DJANGO_SECRET_KEY": secrets.token_urlsafe(50)}


def test_check_deploy_is_clean_with_the_production_variables(tmp_path):
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], tmp_path, **production_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_without_them(tmp_path):
    """The same check fails on the embedded defaults, so the test above can fail."""
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], tmp_path)
    assert result.returncode != 0
    assert "security.W008" in result.stderr + result.stdout


def test_production_variables_turn_on_https_settings(tmp_path):
    shown = settings_in_process(tmp_path, **production_env())
    assert shown["SECURE_SSL_REDIRECT"] and shown["SESSION_COOKIE_SECURE"] and shown["CSRF_COOKIE_SECURE"]
    assert shown["SECURE_HSTS_SECONDS"] >= 31536000
    assert shown["SECURE_HSTS_INCLUDE_SUBDOMAINS"] and shown["SECURE_HSTS_PRELOAD"]
    assert shown["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert shown["TRUSTED_PROXY_COUNT"] == 1
    assert shown["ALLOWED_HOSTS"] == ["realmath.example.org"]


def test_defaults_are_local_and_plain_http(tmp_path):
    shown = settings_in_process(tmp_path)
    assert shown["DEBUG"] is False
    assert "testserver" not in shown["ALLOWED_HOSTS"]
    assert set(shown["ALLOWED_HOSTS"]) == {"localhost", "127.0.0.1", "[::1]"}
    assert not shown["SECURE_SSL_REDIRECT"] and not shown["SESSION_COOKIE_SECURE"]
    assert shown["SECURE_HSTS_SECONDS"] == 0
    assert shown["SECURE_PROXY_SSL_HEADER"] is None  # X-Forwarded-Proto is not trusted without a proxy
    assert shown["SESSION_COOKIE_HTTPONLY"] and shown["X_FRAME_OPTIONS"] == "DENY"


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_secret_key_and_sqlite_files_are_private(tmp_path):
    # While the connection is open (WAL mode), SQLite's -wal and -shm files exist too.
    code = (
        "import os, django; django.setup(); from django.db import connection; "
        "cursor = connection.cursor(); cursor.execute('create table t (x integer)'); "
        "cursor.execute('insert into t values (1)'); "
        "name = connection.settings_dict['NAME']; "
        "print({s: oct(os.stat(str(name) + s).st_mode & 0o777) for s in ('', '-wal', '-shm')})"
    )
    result = run(["-c", code], tmp_path, DJANGO_SETTINGS_MODULE="config.settings")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "{'': '0o600', '-wal': '0o600', '-shm': '0o600'}"
    assert mode(tmp_path / "secret_key") == 0o600
    assert len((tmp_path / "secret_key").read_text().strip()) >= 50
    assert mode(tmp_path / "db.sqlite3") == 0o600
    assert mode(tmp_path) == 0o700


def test_existing_loose_files_are_tightened_and_kept(tmp_path):
    (tmp_path / "secret_key").write_text("an-existing-key-" + "k" * 50)
    (tmp_path / "secret_key").chmod(0o644)
    (tmp_path / "db.sqlite3").touch(mode=0o664)
    (tmp_path / "db.sqlite3").chmod(0o664)
    result = run(["-c", "import django; django.setup()"], tmp_path, DJANGO_SETTINGS_MODULE="config.settings")
    assert result.returncode == 0, result.stderr
    assert mode(tmp_path / "secret_key") == 0o600 and mode(tmp_path / "db.sqlite3") == 0o600
    assert (tmp_path / "secret_key").read_text() == "an-existing-key-" + "k" * 50


def test_two_processes_starting_at_once_share_one_secret_key(tmp_path):
    from config.private_files import read_or_create_secret

    key_file = tmp_path / "secret_key"
    first = read_or_create_secret(key_file)
    assert read_or_create_secret(key_file) == first
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".secret-")]  # no temporary left


@pytest.mark.django_db
def test_pages_carry_a_csp_without_inline_script(annotator_client):
    policy = annotator_client.get("/questions/")["Content-Security-Policy"]
    directives = dict((part.split(" ", 1) + [""])[:2] for part in policy.split("; "))
    assert directives["script-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["base-uri"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert "'unsafe-inline'" not in directives["default-src"]
    # No inline style either: templates set none, scripts style through CSSOM (element.style.x).
    assert directives["style-src"] == "'self'"


@pytest.mark.django_db
def test_only_the_browsable_api_allows_drfs_two_style_attributes_by_hash(annotator_client):
    from config.api_renderers import DRF_STYLE_ATTRIBUTES, style_hash

    def style_src(path, accept):
        policy = annotator_client.get(path, HTTP_ACCEPT=accept)["Content-Security-Policy"]
        return dict((part.split(" ", 1) + [""])[:2] for part in policy.split("; "))["style-src"].split()

    browsable = style_src("/api/responses/", "text/html")
    assert browsable == ["'self'", "'unsafe-hashes'", *map(style_hash, DRF_STYLE_ATTRIBUTES)]
    assert style_src("/api/responses/", "application/json") == ["'self'"]
    assert style_src("/questions/", "text/html") == ["'self'"]


@pytest.mark.django_db
def test_templates_have_no_inline_script_handler_or_style_block():
    """Every template, read as text: scripts come from files, behaviour from data- attributes,
    styles from static/css (linked from the page or base.html), never a style attribute (the
    CSP refuses them: a width from data goes in data-percent, set by app.js through CSSOM)."""
    import re

    offenders = []
    for template in (ROOT / "templates").rglob("*.html"):
        text = template.read_text()
        for pattern in (r"<script(?![^>]*\bsrc=)(?![^>]*application/json)", r"\son[a-z]+\s*=", r"javascript:", r"<style\b",
                        r"\sstyle\s*="):
            if re.search(pattern, text, flags=re.I):
                offenders.append(f"{template.relative_to(ROOT)}: {pattern}")
    assert not offenders, offenders


def test_scripts_style_through_cssom_not_the_style_attribute():
    """The CSP refuses a style attribute written by script (setAttribute, cssText, markup with
    style= put in with innerHTML); element.style.x = ... (CSSOM) is allowed."""
    import re

    offenders = [
        f"{script.relative_to(ROOT)}: {match.group(0)}"
        for script in (ROOT / "static" / "js").rglob("*.js")
        for match in re.finditer(r"""setAttribute\(\s*["']style|\.cssText\b|style\s*=\s*\\?["']|\.innerHTML\b""",
                                 script.read_text())
    ]
    assert not offenders, offenders


def test_every_static_file_a_template_names_exists():
    """A stylesheet or script moved out of a template is linked under a name that exists."""
    import re

    missing = [
        f"{template.relative_to(ROOT)}: {name}"
        for template in (ROOT / "templates").rglob("*.html")
        for name in re.findall(r"""\{% static ['"]([^'"]+)['"] %\}""", template.read_text())
        if not (ROOT / "static" / name).is_file()
    ]
    assert not missing, missing


def test_favicon_is_served_to_anyone():
    client = Client()
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/favicon.ico"
    icon = client.get(response["Location"])
    assert icon.status_code == 200
    assert b"".join(icon.streaming_content if icon.streaming else [icon.content])[:4] == b"\x00\x00\x01\x00"
