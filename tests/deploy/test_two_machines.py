"""Two machines that share no folder (issue 38): a web server and a Celery worker, each with its own
working folder (its own var/, so its own media, import and export folders), sharing only
PostgreSQL, Redis (broker and cache) and an S3-compatible bucket (moto's server on 127.0.0.1). A
reviewer carries work end to end over HTTP, as in a browser: a class PDF with its roster uploaded,
its pages OCR'd by the worker (real tesseract) and verified, a judge run on the worker against the
test OpenAI-compatible server, a background import of a zip the worker reads from the bucket, and
an export the worker zips into the bucket and the web server streams back.

What it proves:
- every file a background task writes goes through the storage layer: the worker's working folder
  is read-only (mode 0555; run as root, the worker is started without CAP_DAC_OVERRIDE so that the
  mode holds), only its own temporary folder (TMPDIR) is writable, and any task writing a file
  under var/ (MEDIA_ROOT, IMPORT_ROOT, EXPORT_ROOT, ...) fails the flow;
- nothing is handed between the two machines through a local path: each reads only the bucket,
  the database and Redis;
- nothing is left behind: after the flow the worker's temporary folder and the web server's
  working folder hold no file (the web server keeps only the empty folders settings.py makes:
  var/ and var/staticfiles/), and the bucket holds exactly the scans (the class PDF's page images
  and their renditions) and the one export zip; no staged import is left in it.

Runs only on PostgreSQL with Redis (the PostgreSQL phase of .ci/run); skipped otherwise.
"""
import io
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest
import requests
from django.conf import global_settings
from django.conf import settings as django_settings
from django.urls import reverse

from annotation.export.writers import write_export
from annotation.models import Exam, ExportJob, ImportJob, Question, Response
from grading.models import JudgeResult, JudgeRun
from ocr.models import OcrRun, Page, ScanBatch, ScanFile, Transcript
from ocr.selectors import batch_progress
from tests.conftest import PASSWORD, make_user
from tests.factories import API_KEY_ENV, make_endpoint, make_question, make_responses, make_setting
from tests.llm_server import LlmServer, Reply
from tests.ocr.class_scans import class_pdf, roster, template
from tests.s3_server import KEYS, s3_server  # noqa: F401 (the S3 test server fixture)
from tests.workers import ROOT, Worker, database_url, purge_queue, wait_for

DATABASE = django_settings.DATABASES["default"]["ENGINE"]
BROKER = django_settings.CELERY_BROKER_URL

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif("postgresql" not in DATABASE, reason="the two-machine test needs PostgreSQL (DATABASE_URL): "
                       "a second machine cannot reach SQLite; .ci/run runs it in its PostgreSQL phase"),
    pytest.mark.skipif(not django_settings.REDIS_URL or not BROKER.startswith(("redis://", "amqp://")),
                       reason="the two-machine test needs Redis (REDIS_URL) and a network broker (CELERY_BROKER_URL)"),
]

# Root is not held back by a folder's mode: the worker runs without the capabilities that bypass it.
NO_OVERRIDE = ("setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner",
               "--inh-caps=-dac_override,-dac_read_search,-fowner", "--")
# Variables of this process that would point either machine at another's folders.
FOLDER_VARIABLES = ("REALMATH_VAR_DIR", "REALMATH_MEDIA_ROOT", "REALMATH_IMPORT_ROOT", "REALMATH_EXPORT_ROOT",
                    "REALMATH_RATELIMIT_DIR", "REALMATH_BEAT_LOCK", "SQLITE_TEST_NAME", "TMPDIR")
GOOD = {"1": "3-17", "2": "3-18"}  # the class template: two pages per student, one per question
IMPORTED = 60  # answers in the imported zip (its dataset.jsonl is well over the web's sync limit)


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*") if not p.is_dir())


def _keys(s3, bucket):
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []))


def _machine_env(base, var_dir, tmp_dir, queue, bucket, endpoint):
    env = {k: v for k, v in os.environ.items() if k not in FOLDER_VARIABLES}
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    env.update(
        DATABASE_URL=database_url(), DJANGO_SETTINGS_MODULE="config.settings", PYTHONPATH=str(ROOT),
        DJANGO_SECRET_KEY="two-machines-" + queue, DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
        REALMATH_VAR_DIR=str(var_dir), TMPDIR=str(tmp_dir),
        REALMATH_STORAGE="s3", AWS_STORAGE_BUCKET_NAME=bucket, AWS_S3_ENDPOINT_URL=endpoint,
        AWS_S3_REGION_NAME="us-east-1", AWS_ACCESS_KEY_ID=KEYS["access_key"], AWS_SECRET_ACCESS_KEY=KEYS["secret_key"],
        REALMATH_DEFAULT_QUEUE=queue, OCR_QUEUE=queue, REALMATH_JUDGE_QUEUE=queue,
        REALMATH_RATELIMIT_PREFIX=f"realmath-test:{queue}:", OCR_DEFAULT_ENGINE="tesseract", OMP_THREAD_LIMIT="1",
        REALMATH_IMPORT_SYNC_MAX_BYTES="4096",  # the zip below goes to the worker
        **{API_KEY_ENV: "sk-two-machines"},
    )
    return env


class Web:
    """The web machine: gunicorn serving config.wsgi from its own working folder."""

    def __init__(self, env, cwd, log_path):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{self.port}", "--workers", "1",
             "--threads", "4", "--timeout", "120", "--no-control-socket"],  # no socket in $HOME
            cwd=cwd, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout=60):
        def up():
            if self.proc.poll() is not None:
                pytest.fail(f"web server exited:\n{self.log_path.read_text()[-4000:]}")
            try:
                return requests.get(f"{self.url}/accounts/login/", timeout=30).status_code == 200
            except requests.RequestException:
                return False
        wait_for(up, timeout, "the web server")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


class Browser:
    """A reviewer's session on the web machine: the login form, then forms and the API with the CSRF token."""

    def __init__(self, url):
        self.url, self.session = url, requests.Session()

    def login(self, username):
        self.session.get(f"{self.url}/accounts/login/", timeout=30)
        answer = self.post("/accounts/login/", {"username": username, "password": PASSWORD})
        assert "/accounts/login/" not in answer.url, "login refused"

    def get(self, path, **kwargs):
        return self.session.get(self.url + path, timeout=60, **kwargs)

    def post(self, path, data=None, files=None, **kwargs):
        token = self.session.cookies.get("csrftoken")
        return self.session.post(self.url + path, data={**(data or {}), "csrfmiddlewaretoken": token}, files=files,
                                 headers={"Referer": self.url + path, "X-CSRFToken": token}, timeout=120, **kwargs)

    def post_json(self, path, payload):
        token = self.session.cookies.get("csrftoken")
        return self.session.post(self.url + path, json=payload, timeout=60,
                                 headers={"Referer": self.url + path, "X-CSRFToken": token})


def _import_zip(tmp_path):
    """A full JSONL export's zip of IMPORTED answers of the exam "Imported", made by the app's own
    writer; the exam is then removed, so that importing the zip brings it back."""
    make_responses(make_question("Imported problem: find x.", exam_name="Imported", location="9-01"), IMPORTED)
    write_export(Response.objects.filter(question__exam__name="Imported"), "jsonl", tmp_path / "zip-source")
    Response.objects.filter(question__exam__name="Imported").delete()
    Question.objects.filter(exam__name="Imported").delete()
    Exam.objects.filter(name="Imported").delete()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(tmp_path / "zip-source" / "dataset.jsonl", "dataset.jsonl")
    assert (tmp_path / "zip-source" / "dataset.jsonl").stat().st_size > 4096
    return buffer.getvalue()


def _missing_tool():
    if shutil.which("tesseract") is None:
        return "the two-machine test OCRs with tesseract, which is not installed"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "running as root without setpriv: a read-only folder would not hold the worker back"
    return None


def test_web_and_worker_share_only_the_database_redis_and_the_bucket(tmp_path, settings, s3_server):  # noqa: F811
    import boto3  # slow import (botocore), kept out of the runs that skip this test

    if missing := _missing_tool():  # CI (REALMATH_REQUIRE_SERVICES=1) must run it
        (pytest.fail if os.environ.get("REALMATH_REQUIRE_SERVICES") == "1" else pytest.skip)(missing)

    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS  # the web machine checks the password
    queue = f"two-machines-{uuid.uuid4().hex[:10]}"
    bucket = f"realmath-{uuid.uuid4().hex[:12]}"
    s3 = boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1", aws_access_key_id=KEYS["access_key"],
                      aws_secret_access_key=KEYS["secret_key"])
    s3.create_bucket(Bucket=bucket)

    exam = make_question("Question 3-17: find $a_n$.", exam_name="Two machines", location="3-17").exam
    make_question("Question 3-18: prove $x>0$.", exam_name="Two machines", location="3-18")
    reviewer = make_user("two-machines-reviewer", "reviewer")
    zip_bytes = _import_zip(tmp_path)

    web_dir, worker_dir = tmp_path / "web" / "var", tmp_path / "worker" / "var"
    web_tmp, worker_tmp = tmp_path / "web-tmp", tmp_path / "worker-tmp"
    for folder in (web_dir.parent, web_tmp, worker_tmp, worker_dir / "staticfiles"):  # worker: what settings.py makes
        folder.mkdir(parents=True)
    web_env = _machine_env(tmp_path, web_dir, web_tmp, queue, bucket, s3_server)
    worker_env = _machine_env(tmp_path, worker_dir, worker_tmp, queue, bucket, s3_server)
    worker_before = _files(worker_dir)
    for folder in (worker_dir / "staticfiles", worker_dir, worker_dir.parent):
        folder.chmod(0o555)  # the worker machine's working folder: read-only
    prefix = NO_OVERRIDE if os.geteuid() == 0 else ()


    web = worker = None
    with LlmServer(default=lambda payload: Reply("The steps hold.\n\nOverall Score: 7")) as llm:
        endpoint = make_endpoint(llm, max_concurrency=4, timeout_seconds=5.0, max_attempts=2)
        judge = make_setting(endpoint, name=f"two-machines-{queue}")
        try:
            web = Web(web_env, web_dir.parent, tmp_path / "web.log")
            worker = Worker(worker_env, tmp_path / "worker.log", queue=queue, concurrency=2, prefix=prefix,
                            cwd=worker_dir.parent)
            web.wait_ready()
            worker.wait_ready()
            browser = Browser(web.url)
            browser.login(reviewer.username)

            # 1. A class PDF (two students, two pages each) with its roster and template.
            answer = browser.post(reverse("ocr:class_upload"), {"exam": exam.pk, "engine": "tesseract", "name": "3B"}, files={
                "pdf": ("class.pdf", class_pdf(4, text=True), "application/pdf"),
                "roster": ("ROSTER.csv", roster("s1", "s2"), "text/csv"),
                "template": ("TEMPLATE.json", template(GOOD), "application/json"),
            })
            batch = ScanBatch.objects.get()
            assert answer.status_code == 200 and answer.url.endswith(reverse("ocr:batch_detail", args=[batch.pk]))

            # 2. OCR on the worker; the reviewer opens a page image (streamed from the bucket) and verifies each page.
            wait_for(lambda: batch_progress(batch)["complete"]
                     and Transcript.objects.filter(page__batch=batch).count() == 4, 120, "the OCR of the class PDF")
            runs = list(OcrRun.objects.filter(page__batch=batch))
            assert len(runs) == 4 and {r.status for r in runs} == {"done"}, [r.error for r in runs]
            pages = list(Page.objects.filter(batch=batch).select_related("transcript").order_by("id"))
            image = browser.get(reverse("ocr:page_image", args=[pages[0].pk, "web"]))
            assert image.status_code == 200 and image.content[:4] in (b"\x89PNG", b"RIFF", b"\xff\xd8\xff\xe0",
                                                                       b"\xff\xd8\xff\xdb", b"\xff\xd8\xff\xe1")
            for page in pages:
                saved = browser.post_json(f"/api/ocr/pages/{page.pk}/transcript/", {
                    "action": "verify", "text": page.transcript.text or "x", "base_version": page.transcript.version})
                assert saved.status_code == 200, saved.text
            responses = Response.objects.filter(question__exam=exam)
            assert responses.count() == 4  # two students, two questions

            # 3. A judge run of the exam's answers, on the worker, against the test LLM server.
            started_run = browser.post(reverse("grading:judge_run_start"), {"config": judge.pk, "exam": exam.pk})
            run = JudgeRun.objects.get()
            assert started_run.url.endswith(reverse("grading:judge_run_detail", args=[run.pk])) and run.n_items == 4
            wait_for(lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE, 60, "the judge run")
            scores = JudgeResult.objects.filter(setting=judge).values_list("score", flat=True)
            assert sorted(scores) == [7] * 4 and llm.request_count == 4

            # 4. A background import of a zip: staged in the bucket by the web, imported by the worker.
            posted = browser.post(reverse("annotation:import"), {"format": "dataset"},
                                  files={"file": ("dataset.zip", zip_bytes, "application/zip")})
            job = ImportJob.objects.get()
            assert posted.url.endswith(reverse("annotation:import_job", args=[job.pk])), posted.url
            wait_for(lambda: ImportJob.objects.get(pk=job.pk).status in ("done", "failed"), 60, "the import")
            job.refresh_from_db()
            assert job.status == "done", job.error
            assert Response.objects.filter(question__exam__name="Imported").count() == IMPORTED

            # 5. An export of everything, zipped by the worker into the bucket, downloaded through the web.
            posted = browser.post(reverse("annotation:export"), {"format": "jsonl"})
            export = ExportJob.objects.get()
            assert posted.url.endswith(reverse("annotation:export_job", args=[export.pk])), posted.url
            wait_for(lambda: ExportJob.objects.get(pk=export.pk).status in ("done", "failed"), 60, "the export")
            export.refresh_from_db()
            assert export.status == "done", export.error
            download = browser.get(reverse("annotation:export_download", args=[export.pk]))
            assert download.status_code == 200
            with zipfile.ZipFile(io.BytesIO(download.content)) as archive:
                lines = [json.loads(line) for line in archive.read("dataset.jsonl").decode().splitlines()]
            assert sum(1 for line in lines if line.get("type") == "response") == 4 + IMPORTED
            assert download.content == s3.get_object(Bucket=bucket, Key=export.file_name)["Body"].read()
        finally:
            for machine in (worker, web):
                if machine is not None:
                    machine.stop()
            purge_queue(queue)
            for folder in (worker_dir.parent, worker_dir, worker_dir / "staticfiles"):
                folder.chmod(stat.S_IRWXU)  # pytest may remove tmp_path again

    log = (tmp_path / "worker.log").read_text()
    assert "Permission denied" not in log and "Read-only file system" not in log, log[-4000:]
    # Nothing left behind: the worker wrote nothing in its folder and left its temporary folder empty;
    # the web machine kept no file (settings.py makes var/ and var/staticfiles/, empty).
    assert _files(worker_dir) == worker_before == []
    assert _files(worker_tmp) == []
    assert _files(web_dir.parent) == [] and _files(web_tmp) == []
    # The bucket holds the scans (the class PDF as uploaded, each page's renditions) and the one export zip:
    # no staged import, no file kept for a choice, nothing else.
    keys = _keys(s3, bucket)
    scans = {getattr(p, field) for p in Page.objects.filter(batch=batch) for field in ("master", "web", "processed", "thumb")}
    scans |= set(ScanFile.objects.filter(batch=batch).values_list("stored", flat=True))
    assert len(scans - {""}) == 1 + 4 * 4
    assert keys == sorted(scans - {""} | {export.file_name}), keys
    assert export.file_name.startswith("exports/")
