"""Compare settings, paired (grading.review.views.compare_page, /grading/review/compare/): the page (roles, figures, bad input, JSON, flat queries) and the
`compare_settings` command, on scripted judges whose errors are known."""
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db
URL = reverse("grading:review_compare")


@pytest.fixture
def judges():
    """Two questions x 5 human answers and 3 synthetic, gold 5. Judge A errs by +2 everywhere;
    judge B is exact except +3 on the first human answer of each question; judge C scored only
    the human answers."""
    answers = []
    for q in range(2):
        question = make_question(f"Problem {q}: show $x^2 \\geq 0$.", location=f"3-0{q}")
        answers += make_responses(question, 5, source="human", start=10 * q)
        answers += make_responses(question, 3, source="synthetic", start=10 * q + 5)
    set_gold(answers, [5] * len(answers))
    a, b, c = (make_stored_setting(name) for name in ("judge-a", "judge-b", "judge-c"))
    make_results(a, answers, [7] * len(answers))
    make_results(b, answers, [8 if i % 8 == 0 else 5 for i in range(len(answers))])
    human = [r for r in answers if r.source == "human"]
    make_results(c, human, [5] * len(human))
    return a, b, c, answers


def _query(*settings, **extra):
    return "&".join([*(f"setting={s.pk}" for s in settings), *(f"{k}={v}" for k, v in extra.items())])


def test_page_needs_a_reviewer(annotator_client, judges):
    a, b, *_ = judges
    assert Client().get(f"{URL}?{_query(a, b)}").status_code == 302
    assert annotator_client.get(f"{URL}?{_query(a, b)}").status_code == 403


def test_two_settings_show_known_differences(reviewer_client, judges):
    a, b, *_ = judges
    response = reviewer_client.get(f"{URL}?{_query(a, b)}")
    assert response.status_code == 200
    page = response.content.decode()
    assert "16 answers of 2 questions scored by both" in page
    assert "not estimable: 2 questions" in page  # no interval from two questions
    assert 'data-measure="mae"' in page and "-1.625" in page  # MAE 2 -> 0.375
    assert "response #" in page  # B close and A off by 2 on 14 answers, listed with links


def test_json_download_holds_the_selection_seed_and_figures(reviewer_client, judges):
    a, b, *_ = judges
    response = reviewer_client.get(f"{URL}?{_query(a, b, seed=7)}&format=json")
    assert response["Content-Disposition"].endswith('"compare-settings.json"')
    data = json.loads(response.content)
    assert data["seed"] == 7 and data["n_resamples"] == 1000 and "cluster" in data["resampling"]
    [pair] = data["pairs"]
    mae = pair["overall"]["measures"]["mae"]
    assert (mae["a"], mae["b"], mae["difference"]) == (pytest.approx(2.0), pytest.approx(0.375), pytest.approx(-1.625))
    # two questions: no interval (core.uncertainty.MIN_CLUSTERS), and the JSON says why
    assert mae["ci"] == [None, None] and pair["overall"]["interval_note"] == "not estimable: 2 questions"
    assert pair["overall"]["sign_test"]["p_value"] == pytest.approx(2 * (1 + 16 + 120) / 2**16)
    assert (pair["overall"]["sign_test"]["b_better"], pair["overall"]["sign_test"]["a_better"]) == (14, 2)
    assert pair["cases"]["n_b_close_a_off"] == 14 and pair["cases"]["n_a_close_b_off"] == 0
    assert {row["source"]: row["n"] for row in pair["by_source"]} == {"human": 10, "synthetic": 6}
    assert [row["n"] for row in pair["by_question"]] == [8, 8]


def test_three_settings_make_every_pair_on_its_own_common_answers(reviewer_client, judges):
    a, b, c, _ = judges
    data = json.loads(reviewer_client.get(f"{URL}?{_query(a, b, c)}&format=json").content)
    assert [(p["a"], p["b"], p["n_common"]) for p in data["pairs"]] == [(a.pk, b.pk, 16), (a.pk, c.pk, 10), (b.pk, c.pk, 10)]
    assert data["pairs"][1]["only_a"] == 6


@pytest.mark.parametrize("query", ["setting=%C2%B2&setting=1", "setting=1", "setting=999999&setting=999998"])
def test_bad_choices_are_a_clear_400(reviewer_client, judges, query):
    response = reviewer_client.get(f"{URL}?{query}")
    assert response.status_code == 400
    assert 'id="compare-error"' in response.content.decode()


def test_queries_stay_flat_as_answers_grow(reviewer_client, judges):
    a, b, *_ = judges
    with CaptureQueriesContext(connection) as small:
        reviewer_client.get(f"{URL}?{_query(a, b)}")
    question = make_question("Another problem", location="3-09")
    more = make_responses(question, 40, source="human", start=500)
    set_gold(more, [4] * 40)
    make_results(a, more, [4] * 40, key_prefix="more")
    make_results(b, more, [6] * 40, key_prefix="more")
    with CaptureQueriesContext(connection) as large:
        reviewer_client.get(f"{URL}?{_query(a, b)}")
    assert len(large) == len(small)


def test_command_prints_the_table_and_json(judges, capsys):
    a, b, *_ = judges
    call_command("compare_settings", "judge-a", f"#{b.pk}", "--bootstrap", "200")
    out = capsys.readouterr().out
    assert "16 answers of 2 questions scored by both" in out and "B closer on 14" in out
    call_command("compare_settings", "judge-a", "judge-b@1", "--format", "json", "--seed", "3")
    data = json.loads(capsys.readouterr().out)
    assert data["seed"] == 3 and data["pairs"][0]["n_common"] == 16
    for bad in (["judge-a"], ["judge-a", "nobody"], ["judge-a", "#x2"], ["judge-a", "judge-b@²"]):
        with pytest.raises(CommandError):
            call_command("compare_settings", *bad)


def test_many_answers_are_read_through_a_subquery_with_the_same_figures(judges, monkeypatch):
    """Past MAX_LISTED_IDS answers the common answers are read by a subquery of the settings'
    results, not a list of ids: the same pairs and figures, and answers only one setting scored
    (judge C's, with A) stay out of the answers read but in `only_a` / `only_b`."""
    from grading.review.selectors import comparison

    a, b, c, _ = judges
    listed = comparison.compare_settings([a, b, c], n_resamples=200, seed=3)
    monkeypatch.setattr(comparison, "MAX_LISTED_IDS", 1)
    through_subquery = comparison.compare_settings([a, b, c], n_resamples=200, seed=3)
    assert through_subquery == listed
    pairs = {(p["a"], p["b"]): p for p in listed["pairs"]}
    assert pairs[(a.pk, b.pk)]["n_common"] == 16 and pairs[(a.pk, c.pk)]["n_common"] == 10
    assert pairs[(a.pk, c.pk)]["only_a"] == 6 and pairs[(a.pk, c.pk)]["only_b"] == 0
