"""The export job page in Chromium: it polls the job's progress, shows the finished job and its
download link without a reload, and stops polling once the job is done."""

import pytest

from annotation.export.services import run_export_job
from annotation.models import ExportJob
from tests.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"


def test_the_job_page_follows_the_job_until_it_is_done(page, live_server, sample_data, reviewer):
    job = ExportJob.objects.create(format="csv", filters={"source": "human"}, total=32, created_by=reviewer)
    polls = []
    page.on("request", lambda request: polls.append(request.url) if request.url.endswith("/progress/") else None)
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/export/{job.pk}/")
    assert page.text_content("#export-status") == "Queued"
    assert page.is_hidden("#export-download")
    page.wait_for_timeout(1200)
    assert polls and page.text_content("#export-status") == "Queued"  # polled, nothing to show yet

    run_export_job(job.pk)  # as the worker would, while the page watches
    page.wait_for_function("() => document.getElementById('export-status').textContent === 'Done'")
    assert page.text_content("#export-count") == "32 / 32"
    assert page.is_visible("#export-download")
    assert page.get_attribute("#export-download", "href").endswith(f"/export/{job.pk}/download/")

    seen = len(polls)
    page.wait_for_timeout(2500)  # more than two polling intervals
    assert len(polls) == seen and seen >= 2
