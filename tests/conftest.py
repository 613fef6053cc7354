"""Shared fixtures: users per role, logged-in clients, the sample data, a real browser."""
import os
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import URLResolver, get_resolver
from rest_framework.test import APIClient

from accounts.services import create_user_with_role

ROOT = Path(__file__).resolve().parent.parent
DEMO_DIR = ROOT / "fixtures" / "demo"
REALMATH_HUMAN = DEMO_DIR / "realmath_eval.json"
REALMATH_SYNTHETIC = DEMO_DIR / "realmath_eval_llm_answer.json"
INEQMATH_SAMPLE = DEMO_DIR / "ineqmath_train_sample.json"
PASSWORD = "a-long-test-password"
CHROMIUM = os.environ.get("CHROMIUM_PATH", shutil.which("chromium") or "/usr/bin/chromium")

# django_db_setup: each xdist worker's test database is a copy of one database migrated per run.
pytest_plugins = ["tests._template_db"]


def _own_cache_keys():
    """Each xdist worker has its own test database, so job ids repeat across workers; with the
    Redis every worker shares (the PostgreSQL phase) one worker's import heartbeat for job 1 read
    as a sign of life of another's job 1. Each worker (and every process it starts, through the
    environment) gets its own cache key prefix. Settings are read before this file, hence both."""
    from django.conf import settings
    from django.core.cache import caches

    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", str(os.getpid()))[:12]
    prefix = f"test-{run}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    os.environ["REALMATH_CACHE_KEY_PREFIX"] = prefix
    settings.CACHES["default"]["KEY_PREFIX"] = prefix
    caches.__dict__.pop("settings", None)  # the handler reads CACHES again on first use


_own_cache_keys()


# Schemathesis builds every fuzz case while collecting (about half of the suite's collection
# time, in every xdist worker): `make test` (-m "not fuzz") does not open the module at all.
FUZZ_MODULES = {"test_api_fuzz.py"}


def pytest_ignore_collect(collection_path, config):
    if collection_path.name in FUZZ_MODULES and config.getoption("markexpr", "").replace(" ", "") == "notfuzz":
        return True
    return None


@pytest.fixture(autouse=True)
def _isolated_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def _egress_buffer():
    """The provider-call log's unwritten records belong to the test that made them (egress.services)."""
    from egress import services

    services.discard()
    yield
    services.discard()


@pytest.fixture(autouse=True)
def _english_between_tests():
    """Every test starts and ends in the default language: a page served in Chinese through the
    test client leaves its language active in the thread (LocaleMiddleware does not undo it), and
    a later test's command output would come out in Chinese."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Users are made in most tests; the default hasher's deliberate slowness only costs test time."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _eager_celery(request, settings):
    """Tasks run in-process unless a test asks for a real worker (marker `integration`)."""
    from config.celery import app

    eager = request.node.get_closest_marker("integration") is None
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = eager
    settings.CELERY_TASK_ALWAYS_EAGER = eager
    yield
    app.conf.task_always_eager = previous


def url_routes(resolver=None, prefix=""):
    """Every route of the URL configuration (or below `resolver`), as its pattern strings joined."""
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            yield from url_routes(pattern, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern)


def assert_reviewer_only(url, annotator, reviewer, method="get"):
    """Anonymous users go to the login page, annotators get 403, reviewers get in."""
    anonymous = Client()
    response = getattr(anonymous, method)(url)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    client = Client()
    client.force_login(annotator)
    assert getattr(client, method)(url).status_code == 403
    client.force_login(reviewer)
    return getattr(client, method)(url)


def assert_post_refused(url, annotator, reviewer):
    """A reviewer-only POST route: anonymous users go to the login page, an annotator's POST is a
    403, a reviewer's GET a 405 (the caller then checks that nothing changed)."""
    assert "/accounts/login/" in Client().post(url)["Location"]
    other = Client()
    other.force_login(annotator)
    assert other.post(url).status_code == 403
    other.force_login(reviewer)
    assert other.get(url).status_code == 405


def make_user(username, role):
    return create_user_with_role(username, PASSWORD, role)


@pytest.fixture
def annotator(db):
    return make_user("ann1", "annotator")


@pytest.fixture
def annotator2(db):
    return make_user("ann2", "annotator")


@pytest.fixture
def reviewer(db):
    return make_user("rev1", "reviewer")


@pytest.fixture
def admin_user(db):
    user = make_user("adm1", "admin")
    user.is_superuser = True
    user.save()
    return user


def _client_for(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def annotator_client(client, annotator):
    return _client_for(client, annotator)


@pytest.fixture
def reviewer_client(client, reviewer):
    return _client_for(client, reviewer)


@pytest.fixture
def admin_client_(client, admin_user):
    return _client_for(client, admin_user)


def api_client_for(user):
    api = APIClient()
    api.force_authenticate(user)
    return api


@pytest.fixture
def sample_data(db):
    """Both RealMath-Eval sample files imported: 2 questions, 64 responses."""
    call_command("import_realmath", str(REALMATH_HUMAN))
    call_command("import_realmath", str(REALMATH_SYNTHETIC))


# --- real browser -------------------------------------------------------------------------

@pytest.fixture(scope="session")
def browser():
    """Debian's chromium driven by Playwright (never a downloaded browser)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"chromium not found at {CHROMIUM}; .ci/run installs it")
        pytest.skip("chromium is not installed (make test installs it where apt is available)")
    from playwright.sync_api import sync_playwright

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()


def login(page, live_server, username, password=PASSWORD):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


SCREENSHOT_DIR = ROOT / "test-artifacts"


def screenshot(page, name):
    """Keep a screenshot of a page under test-artifacts/ for a person to look at."""
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / f"{name}.png"), full_page=True)
