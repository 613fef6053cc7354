"""An export's zip (annotation.export.views.export_download, /export/<pk>/download/): streamed under
its download name when the export is done and its file is there; reviewers only; an unknown id,
an export not done or a file removed is a 404."""
import pytest
from django.conf import settings
from django.urls import reverse

from annotation.models import ExportJob
from tests.conftest import assert_reviewer_only

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_export_root")]


@pytest.fixture
def finished(reviewer):
    root = settings.EXPORT_ROOT
    root.mkdir(parents=True, exist_ok=True)
    (root / "export-7.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip
    return ExportJob.objects.create(format="jsonl", status="done", done=1, total=1, file_name="export-7.zip",
                                    file_size=22, created_by=reviewer)


def test_reviewers_only_and_the_zip_is_streamed_under_its_name(annotator, reviewer, finished):
    answer = assert_reviewer_only(reverse("annotation:export_download", args=[finished.pk]), annotator, reviewer)
    assert answer.status_code == 200
    assert f"realmath-export-{finished.pk}-jsonl.zip" in answer["Content-Disposition"]
    assert b"".join(answer.streaming_content) == b"PK\x05\x06" + b"\x00" * 18


def test_a_removed_file_is_a_404_that_says_so(reviewer_client, finished):
    (settings.EXPORT_ROOT / "export-7.zip").unlink()
    assert reviewer_client.get(reverse("annotation:export_download", args=[finished.pk])).status_code == 404


@pytest.mark.parametrize("status", ["queued", "running", "failed"])
def test_an_export_not_done_is_a_404(reviewer_client, reviewer, status):
    job = ExportJob.objects.create(format="csv", status=status, created_by=reviewer)
    assert reviewer_client.get(reverse("annotation:export_download", args=[job.pk])).status_code == 404


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_export_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/export/{pk}/download/").status_code == 404
