"""The Batch API's files need no shared folder (issue 38): a part's request file is written from
the lines in the database into the worker's temp folder, uploaded and removed in the same step, and
an ended batch's output and error files are downloaded into a temporary folder, read and removed in
the same step. Any machine's worker can take any step of a batch run; nothing stays behind."""
import tempfile

import pytest

from grading.judges import services
from grading.models import JudgeRun
from llm import batches as llm_batches
from tests.factories import make_setting
from tests.judges.helpers import score_by_answer
from tests.llm_batches import BatchApi

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_batches(settings):
    settings.LLM_BATCH_POLL_SECONDS = 0.05
    settings.LLM_BATCH_POLL_MAX_SECONDS = 0.2


def test_batch_files_live_only_in_the_worker_s_temp_folder_for_one_step(llm_server, endpoint, responses, settings,
                                                                       tmp_path, monkeypatch,
                                                                       django_capture_on_commit_callbacks):
    llm_server.default = score_by_answer({n: n % 11 for n in range(100)})
    BatchApi(llm_server, delay=0.2).install()
    scratch = tmp_path / "worker-temp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    settings.MEDIA_ROOT = tmp_path / "media"
    seen = []
    upload, download = llm_batches.BatchClient.upload, llm_batches.BatchClient.download

    def watched_upload(self, filename, path):
        seen.append(("upload", path))
        return upload(self, filename, path)

    def watched_download(self, file_id, path):
        size = download(self, file_id, path)
        seen.append(("download", path))
        return size

    monkeypatch.setattr(llm_batches.BatchClient, "upload", watched_upload)
    monkeypatch.setattr(llm_batches.BatchClient, "download", watched_download)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.start_judge_run(make_setting(endpoint), mode="batch")
    run = services.run_batch_inline(run, timeout=30)
    assert run.status == JudgeRun.Status.DONE
    kinds = {kind for kind, _ in seen}
    assert kinds == {"upload", "download"}
    assert all(str(path).startswith(str(scratch)) for _, path in seen)  # the worker's temp folder only
    assert list(scratch.iterdir()) == []  # each removed within its step
    assert not (tmp_path / "media").exists()
