"""The choice after an import that asked first (annotation.views.import_choose,
/import/choose/<token>/): the upload is kept, one button imports it with the choice (issue 34)."""
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.importers import pending
from annotation.models import Exam, ImportJob, Question
from tests.conftest import REALMATH_HUMAN, ROOT, make_user

FULL = ROOT / "fixtures" / "realmath_eval_full" / "realmath_eval.json"
SAMPLE = "RealMath-Eval sample"

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(settings, tmp_path):
    settings.IMPORT_ROOT = tmp_path
    call_command("import_realmath", str(REALMATH_HUMAN), "--exam", SAMPLE)


def _ask(client):
    with FULL.open("rb") as handle:
        page = client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Release"})
    html = page.content.decode()
    token = html.split('/import/choose/')[1].split('/')[0]
    return html, token


def _kept(settings):
    """The files of the storage layer (the local media folder) under imports/."""
    folder = settings.MEDIA_ROOT / "imports"
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_one_button_moves_the_release_together_without_uploading_it_again(reviewer_client, demo, settings):
    html, token = _ask(reviewer_client)
    assert 'value="join"' in html and "Import the file into “RealMath-Eval sample”" in html
    assert "Move them into “Release”, with their answers" in html and 'value="keep"' in html
    assert Question.objects.count() == 2  # nothing imported yet
    page = reviewer_client.post(reverse("annotation:import_choose", args=[token]), {"overlap": "move"}, follow=True)
    assert Question.objects.filter(exam__name="Release").count() == 14
    assert page.content.decode().count("moved from “RealMath-Eval sample” into “Release”") == 2
    assert _kept(settings) == []  # the kept upload is gone from the storage layer once imported
    again = reviewer_client.post(reverse("annotation:import_choose", args=[token]), {"overlap": "move"})
    assert again.status_code == 404


def test_join_through_its_button(reviewer_client, demo):
    _, token = _ask(reviewer_client)
    reviewer_client.post(reverse("annotation:import_choose", args=[token]), {"overlap": "join"})
    assert Question.objects.filter(exam__name=SAMPLE).count() == 14
    assert not Exam.objects.filter(name="Release").exists()


def test_only_the_uploader_can_choose_and_bad_choices_import_nothing(reviewer_client, demo):
    from django.test import Client

    _, token = _ask(reviewer_client)
    client = Client()
    client.force_login(make_user("rev2", "reviewer"))
    assert client.post(reverse("annotation:import_choose", args=[token]), {"overlap": "move"}).status_code == 404
    assert client.post(reverse("annotation:import_choose", args=["not-a-token"]), {"overlap": "move"}).status_code == 404
    for bad in ("ask", "merge", ""):
        page = reviewer_client.post(reverse("annotation:import_choose", args=[token]), {"overlap": bad}, follow=True)
        assert "Nothing was imported." in page.content.decode()
    assert reviewer_client.get(reverse("annotation:import_choose", args=[token])).status_code == 405
    assert Question.objects.count() == 2


def test_an_expired_choice_is_gone(reviewer_client, demo, monkeypatch, settings):
    _, token = _ask(reviewer_client)
    assert _kept(settings) == [f"pending/{token}.json", f"pending/{token}.upload"]  # kept in the storage layer
    monkeypatch.setattr(pending, "PENDING_SECONDS", -1)
    assert reviewer_client.post(reverse("annotation:import_choose", args=[token]), {"overlap": "move"}).status_code == 404
    pending.expire()
    assert _kept(settings) == []


def test_a_large_upload_asked_in_its_job_offers_the_same_buttons(reviewer_client, demo, settings, monkeypatch, tmp_path):
    from annotation.importers import services as jobs

    settings.IMPORT_SYNC_MAX_BYTES = 10  # every upload is a job
    monkeypatch.setattr(jobs.tasks.run_import_job_task, "delay", lambda job_id: None)  # run below, in this process
    with FULL.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Release"})
    job = ImportJob.objects.get()
    jobs.run_import_job(job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and "already in other exams" in job.error
    html = reviewer_client.get(reverse("annotation:import_job", args=[job.pk])).content.decode()
    token = html.split('/import/choose/')[1].split('/')[0]
    page = reviewer_client.post(reverse("annotation:import_choose", args=[token]), {"overlap": "move"})
    second = ImportJob.objects.exclude(pk=job.pk).get()
    assert page.url == reverse("annotation:import_job", args=[second.pk])
    jobs.run_import_job(second.pk)
    second.refresh_from_db()
    assert second.status == ImportJob.Status.DONE, second.error
    assert Question.objects.filter(exam__name="Release").count() == 14
    assert _kept(settings) == [] and not [p for p in tmp_path.rglob("*") if p.suffix in (".upload", ".jsonl")]


def test_annotators_cannot_choose(annotator_client, demo):
    assert annotator_client.post(reverse("annotation:import_choose", args=["0" * 32]), {"overlap": "move"}).status_code == 403
