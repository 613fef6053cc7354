"""The API is fuzzed against its own OpenAPI schema: no 5xx anywhere, and the role checks hold.

Schemathesis generates requests from the schema drf-spectacular serves; they run in-process
against the WSGI app on the test database. A second pass widens every number in the schema
(query, path and body) to also take non-ASCII digits and special floats as text ("²", "NaN",
"sNaN", "1E+999999", ...), which Python's int(), Decimal() and str.isdigit() accept or half-accept. Celery tasks that a request would start go to an
in-memory broker here (nothing runs), so a fuzzed "start a run" cannot reach any network.
"""
import copy

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token

from accounts.roles import REVIEWER, has_role

from .conftest import make_user

# Its own marker: `make test` leaves the fuzz out, `make test-fuzz` runs it (its own CI step).
pytestmark = pytest.mark.fuzz

SPECIAL_NUMBERS = ["²", "٣", "１２", "NaN", "-NaN", "sNaN", "Infinity", "-Infinity", "inf", "1E+999999", "-1E+999999",
                   "1e-999999", "0x10", "1_0", " 7 ", "7.0", "-0", "9223372036854775808"]


def with_special_numbers(node):
    """A copy of a schema where every integer or number may also be one of SPECIAL_NUMBERS."""
    if isinstance(node, list):
        return [with_special_numbers(item) for item in node]
    if not isinstance(node, dict):
        return node
    widened = {key: with_special_numbers(value) for key, value in node.items()}
    if node.get("type") in ("integer", "number"):
        return {"anyOf": [copy.deepcopy(node), {"type": "string", "enum": SPECIAL_NUMBERS}]}
    return widened


RAW_SCHEMA = SchemaGenerator().get_schema(request=None, public=True)
schema = schemathesis.openapi.from_dict(RAW_SCHEMA)
schema.app = get_wsgi_application()
special_schema = schemathesis.openapi.from_dict(with_special_numbers(copy.deepcopy(RAW_SCHEMA)))
special_schema.app = schema.app
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@pytest.fixture
def fuzz_env(db, settings):
    from config.celery import app

    settings.ALLOWED_HOSTS = ["*"]
    app.conf.task_always_eager = False
    previous = app.conf.broker_url
    app.conf.broker_url = "memory://"
    # Requests reach the WSGI handler directly, not through Django's test client, so the
    # end-of-request hook would close the connection that holds the test's transaction
    # (PostgreSQL; SQLite's in-memory database is never closed). Unhook it as the test client does.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)
    app.conf.broker_url = previous


def _token(username, role):
    user = make_user(username, role)
    return user, {"Authorization": f"Token {Token.objects.create(user=user).key}"}


@pytest.fixture
def reviewer_token(db):
    return _token("fuzz-reviewer", "reviewer")


@pytest.fixture
def annotator_token(db):
    return _token("fuzz-annotator", "annotator")


def _resolves(case):
    from django.urls import Resolver404, resolve

    try:
        resolve(case.formatted_path)
    except Resolver404:
        return False
    return True


def _view_needs_reviewer(case):
    from django.urls import Resolver404, resolve

    try:
        match = resolve(case.formatted_path)
    except Resolver404:
        return False  # a generated path no route matches: the app answers 404
    view = getattr(match.func, "cls", None) or getattr(match.func, "view_class", None)
    permissions = getattr(view, "permission_classes", [])
    return any(getattr(p, "role", None) in ("reviewer", "admin") for p in permissions)


@schema.parametrize()
@SETTINGS
def test_reviewer_requests_never_fail_with_5xx(case, fuzz_env, sample_data, reviewer_token):
    _, headers = reviewer_token
    case.call_and_validate(headers=headers, checks=[schemathesis.checks.not_a_server_error])


@schema.parametrize()
@SETTINGS
def test_annotator_requests_never_fail_and_reviewer_endpoints_refuse(case, fuzz_env, sample_data, annotator_token):
    user, headers = annotator_token
    response = case.call(headers=headers)
    assert response.status_code < 500, f"{case.method} {case.path}: {response.status_code}"
    assert not has_role(user, REVIEWER)
    if _view_needs_reviewer(case):
        assert response.status_code in (403, 404, 405), f"{case.method} {case.path} answered {response.status_code}"


@special_schema.parametrize()
@SETTINGS
def test_special_numbers_never_fail_with_5xx(case, fuzz_env, sample_data, reviewer_token):
    """As a reviewer, who reaches every view's parsing (annotators share it, minus the role checks)."""
    _, headers = reviewer_token
    response = case.call(headers=headers)
    assert response.status_code < 500, f"{case.method} {case.formatted_path} {case.query}: {response.status_code}"


@schema.parametrize()
@SETTINGS
def test_anonymous_requests_are_refused(case, fuzz_env):
    response = case.call()
    allowed = (401, 403, 405) if _resolves(case) else (404,)  # no route: Django answers 404 before any view
    assert response.status_code in allowed, f"{case.method} {case.formatted_path} answered {response.status_code}"
