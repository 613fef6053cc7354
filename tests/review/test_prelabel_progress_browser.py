"""The disagreement queue in Chromium: a running LLM pre-label run's row polls the run's API
address (from its data-url) and shows the finished run, then stops polling."""

from types import SimpleNamespace

import pytest

from grading.models import MetaEvalRun
from tests.conftest import login
from tests.factories import make_endpoint

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_running_prelabel_row_follows_its_run_until_it_ends(page, live_server, reviewer):
    endpoint = make_endpoint(SimpleNamespace(url="http://127.0.0.1:9/v1"))
    run = MetaEvalRun.objects.create(endpoint=endpoint, model="meta-model", prompt_version="v1", n_items=3)
    polls = []
    page.on("request", lambda request: polls.append(request.url) if "/meta-eval-runs/" in request.url else None)
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/review/disagreements/")
    row = f"#prelabel-runs tr[data-run='{run.pk}']"
    assert page.text_content(f"{row} .run-status") == "Running"  # the status in words (app.js statusLabel)
    assert page.is_hidden("#prelabel-finished")
    page.wait_for_timeout(2000)
    assert polls and polls[0].endswith(f"/api/review/meta-eval-runs/{run.pk}/")

    MetaEvalRun.objects.filter(pk=run.pk).update(status=MetaEvalRun.Status.DONE)
    page.wait_for_selector(f"{row}[data-status=done]")
    assert page.text_content(f"{row} .run-status") == "Done"
    assert page.is_visible("#prelabel-finished")
    seen = len(polls)
    page.wait_for_timeout(4500)  # two polling intervals
    assert len(polls) == seen
