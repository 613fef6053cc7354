"""The probe page (studies.views.probe_home, /grading/studies/probes/): reviewers start probe runs and see them listed; annotators may not."""
import re

import pytest
from django.test import Client
from django.urls import reverse

from studies.models import ProbeRun
from tests.factories import make_question, make_setting

from .helpers import FAIR, finished_run, make_answers

pytestmark = pytest.mark.django_db
URL = reverse("studies:probes")


def test_login_and_reviewer_role_are_required(client, annotator_client):
    assert Client().get(URL).status_code == 302
    assert annotator_client.get(URL).status_code == 403


def test_reviewer_starts_probes_from_the_form(reviewer_client, endpoint, llm_server, django_capture_on_commit_callbacks):
    llm_server.default = FAIR
    make_answers(make_question(), 3)
    setting = make_setting(endpoint)
    page = reviewer_client.get(URL).content.decode()
    assert "Start probes" in page and f'value="{setting.pk}"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = reviewer_client.post(URL, {"setting": setting.pk, "probes": ["drop-final-answer", "notation-swap"],
                                              "seed": 0})
    run = ProbeRun.objects.get()
    assert response.status_code == 302 and response.url == reverse("studies:probe_run", args=[run.pk])
    run.refresh_from_db()
    assert run.status == "done" and run.n_items == 6 and run.probes == ["drop-final-answer", "notation-swap"]


def test_bad_input_is_refused_with_the_form_kept(reviewer_client, endpoint):
    setting = make_setting(endpoint)
    response = reviewer_client.post(URL, {"setting": setting.pk, "probes": ["nope"], "seed": "x"})
    assert response.status_code == 200 and not ProbeRun.objects.exists()
    assert "Select a valid choice" in response.content.decode()
    response = reviewer_client.post(URL, {"setting": setting.pk, "probes": ["drop-final-answer"], "seed": 0})
    assert "No answer matches" in response.content.decode()  # nothing to probe yet


def test_runs_are_listed_with_progress_in_flat_queries(reviewer_client, endpoint, llm_server, django_assert_max_num_queries):
    llm_server.default = FAIR
    make_answers(make_question(), 2)
    setting = make_setting(endpoint)
    finished_run(setting)
    with django_assert_max_num_queries(40) as few:
        reviewer_client.get(URL)
    n = len(few.captured_queries)
    for _ in range(3):
        finished_run(setting)
    with django_assert_max_num_queries(n):
        page = reviewer_client.get(URL).content.decode()
    assert page.count("probe run #") == 4


def test_probes_start_unticked_and_the_estimate_counts_the_calls(reviewer_client, endpoint):
    make_answers(make_question(), 3)
    setting = make_setting(endpoint, samples=2)
    page = reviewer_client.get(URL).content.decode()
    boxes = re.findall(r'<input type="checkbox" name="probes"[^>]*>', page)
    assert len(boxes) == 6 and not any("checked" in box for box in boxes)
    estimate = reviewer_client.get(reverse("studies:probe_estimate"),
                                   {"setting": setting.pk, "probes": ["drop-final-answer", "notation-swap"]}).json()
    assert estimate == {"answers": 3, "probes": 2, "items": 6, "samples": 2, "calls": 12}
    limited = reviewer_client.get(reverse("studies:probe_estimate"),
                                  {"probes": ["drop-final-answer", "raw-ocr"], "limit": "2"}).json()
    assert (limited["answers"], limited["items"]) == (2, 2)  # no scanned answer: raw OCR adds nothing
    assert reviewer_client.get(reverse("studies:probe_estimate")).json()["calls"] == 0


def test_the_runs_list_names_the_probes_in_words(reviewer_client, reviewer, endpoint, llm_server):
    """Issue 39: the list of runs showed the codes ("drop-final-answer, arithmetic-slip"); it names
    the probes as the run page does, in the reader's language."""
    from accounts.services import set_user_language

    llm_server.default = FAIR
    make_answers(make_question(), 1)
    run = finished_run(make_setting(endpoint))
    cell = re.search(rf'<tr data-run="{run.pk}".*?</tr>', reviewer_client.get(URL).content.decode(), re.S).group(0)
    assert "<code>" not in cell  # a name (in English the code itself), not code
    set_user_language(reviewer, "zh-hans")
    cell = re.search(rf'<tr data-run="{run.pk}".*?</tr>', reviewer_client.get(URL).content.decode(), re.S).group(0)
    assert "删去最终答案" in cell and "drop-final-answer" not in cell


def test_the_probe_choices_read_with_the_languages_brackets(reviewer_client, reviewer, endpoint):
    """"Drop the final answer (sensitivity)" in English; "删去最终答案（敏感性）" in Chinese, and the
    question choice "3-08（题目 #1）" (issue 39)."""
    from accounts.services import set_user_language

    question = make_question()
    make_setting(endpoint)
    page = reviewer_client.get(URL).content.decode()
    assert "Drop the final answer (sensitivity)" in page and f"(question #{question.pk})</option>" in page
    set_user_language(reviewer, "zh-hans")
    page = reviewer_client.get(URL).content.decode()
    assert "删去最终答案（敏感性）" in page and "(敏感性)" not in page
    assert f"（题目 #{question.pk}）</option>" in page and "(question #" not in page
