"""`load_demo` leaves every review page with something to show (scripted judges, made-up, no
server), and running it again adds nothing."""
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Response
from grading import demo
from grading.models import GenerationRun, JudgeResult, JudgeRun, JudgeSetting, MetaEvalProposal, MetaEvalRun

pytestmark = pytest.mark.django_db


def _counts():
    return {model.__name__: model.objects.count()
            for model in (Response, JudgeSetting, JudgeRun, JudgeResult, GenerationRun, MetaEvalRun, MetaEvalProposal)}


@pytest.fixture
def loaded(db):
    call_command("create_demo_users")
    call_command("load_demo")


def test_demo_fills_metrics_queue_categories_and_validation(loaded, reviewer_client):
    rubric = JudgeSetting.objects.get(name=demo.RUBRIC_SETTING)
    assert "made-up" in rubric.name and "made-up" in rubric.notes.lower()
    run = rubric.runs.get()
    assert run.status == "done" and run.n_items == 64 and run.items.filter(state="ok").count() == 64

    metrics = reviewer_client.get(reverse("grading:review_metrics")).content.decode()  # no setting: the newest
    assert demo.RUBRIC_SETTING in metrics and "MSE" in metrics
    report = reviewer_client.get(reverse("grading:review_metrics"), {"setting": rubric.pk}).context["report"]
    assert report["n_counted"] == 64

    queue = reviewer_client.get(reverse("grading:review_disagreements"), {"setting": rubric.pk})
    stats = queue.context["stats"]
    assert stats["total"] > 0 and queue.context["proposal_counts"]["ok"] == stats["total"]
    assert 'id="queue-table"' in queue.content.decode() and "No result of" not in queue.content.decode()

    summary = reviewer_client.get(reverse("grading:review_categories")).context["summary"]
    assert summary["total"] >= 2  # the released labels; the scripted proposals wait for a person

    validation = reviewer_client.get(reverse("grading:review_validation"))
    rows = validation.context["rows"]
    assert len(rows) == 24  # 12 IneqMath problems x 2 scripted students
    assert all(len(row["cells"]) == 6 and all(cell and cell["status"] == "ok" for cell in row["cells"]) for row in rows)
    report = reviewer_client.get(reverse("grading:review_validation_report")).context["report"]
    models = {row["model"]: row for row in report["models"]}
    assert set(models) == set(demo.STUDENT_MODELS) and all(row["n_overall"] == 12 for row in models.values())


def test_running_load_demo_again_adds_nothing(loaded):
    before = _counts()
    call_command("load_demo")
    assert _counts() == before


def test_demo_needs_no_server(loaded):
    """Every scripted result was recorded without a call leaving the process: the endpoint
    points at the local scripted server's port, which nothing listens on in the test."""
    endpoint = JudgeSetting.objects.get(name=demo.RUBRIC_SETTING).endpoint
    assert endpoint.base_url == demo.ENDPOINT_URL and endpoint.api_key_env == ""
    assert not JudgeResult.objects.filter(config__endpoint=endpoint).exclude(status="ok").exists()


def test_load_demo_prints_a_summary_per_import_not_the_sample_files_notes(db):
    import io

    out = io.StringIO()
    call_command("load_demo", stdout=out)
    text = out.getvalue()
    assert "note on record" not in text and "Unmatched labels" not in text
    assert "expected for the demo" in text and "Imported realmath_eval.json" in text


def test_demo_has_a_finished_comparison_of_two_scripted_strategies(loaded, reviewer_client):
    """Issue 27: Verification-First and few-shot, scripted and named so, on the sample answers; the few-shot
    examples (2 per question) are hold-outs: never judged, excluded from the comparison and counted."""
    vf, fs = (JudgeSetting.objects.get(name=name) for _, name in demo.STRATEGY_SETTINGS)
    assert "made-up" in vf.name and "made-up" in fs.name and (vf.strategy, fs.strategy) == ("verification-first", "few-shot")
    assert vf.runs.get().status == "done" and fs.runs.get().status == "done"
    holdout = set(fs.calibration["holdout"])
    assert len(holdout) == 4 and not fs.results.filter(response_id__in=holdout).exists()
    page = reviewer_client.get(reverse("grading:review_compare"), {"setting": [vf.pk, fs.pk]})
    pair = page.context["data"]["pairs"][0]
    assert pair["n_common"] == 60 and pair["n_holdout_excluded"] == 4 and pair["only_a"] == 0
    assert "Verification-First (made-up scores)" in page.content.decode()
