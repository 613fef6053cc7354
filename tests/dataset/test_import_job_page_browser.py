"""The import job page in a real browser: its bar starts at the job's progress (data-percent,
set through CSSOM under the CSP) and follows the job through app.js's RealMath.poll until it ends."""
import pytest

from annotation.models import ImportJob
from tests.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BAR_SHARE = "() => { const b = document.getElementById('import-bar');" \
            " return b.getBoundingClientRect().width / b.parentElement.getBoundingClientRect().width; }"


def test_import_job_page_follows_the_job_until_it_is_done(page, live_server, reviewer):
    job = ImportJob.objects.create(format="jsonl", file_name="dataset.jsonl", stored_name="x", file_size=100,
                                   done=40, total=100, status=ImportJob.Status.RUNNING, created_by=reviewer)
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/import/jobs/{job.pk}/")
    page.wait_for_function(f"() => Math.abs(({BAR_SHARE})() - 0.4) < 0.02")
    ImportJob.objects.filter(pk=job.pk).update(done=100, status=ImportJob.Status.DONE)
    page.wait_for_selector("#import-status:has-text('Done')")
    page.wait_for_function(f"() => ({BAR_SHARE})() > 0.98")
