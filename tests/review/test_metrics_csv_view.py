"""The metrics as CSV (grading.review.views.metrics_csv, /grading/review/metrics.csv)."""
import csv
import io

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_metrics_csv(reviewer_client, cases):
    response = reviewer_client.get(reverse("grading:review_metrics_csv"), {"setting": cases["config"].pk})
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    header, first = rows[0], rows[1]
    assert first[header.index("group")] == "all" and float(first[header.index("mse")]) == pytest.approx(3.0)
    assert float(first[header.index("fr_2")]) == pytest.approx(2 / 5)


def test_metrics_csv_says_how_each_interval_was_made(reviewer_client, cases):
    """Issue 36: the ci_* columns: the unit resampled, the clusters, resamples and seed, why an
    interval is missing, which measures got a Wilson interval (a share of 0 or 1)."""
    response = reviewer_client.get(reverse("grading:review_metrics_csv"), {"setting": cases["config"].pk})
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    header = rows[0]
    assert header[-6:] == ["ci_unit", "ci_clusters", "ci_resamples", "ci_seed", "ci_note", "ci_wilson"]
    by_group = {row[header.index("group")]: dict(zip(header, row)) for row in rows[1:]}
    # All answers: five answers of one question, so no interval and the reason.
    overall = by_group["all"]
    assert (overall["ci_unit"], overall["ci_clusters"], overall["ci_resamples"], overall["ci_seed"]) == ("question", "1", "0", "0")  # nothing drawn
    assert overall["ci_note"] == "not estimable: 1 question" and overall["ci_wilson"] == ""
    assert overall["mse_ci_low"] == overall["mse_ci_high"] == overall["fr_5_ci_high"] == ""
    # The question's own row: its five answers resampled one by one; |Δ| = 3, 2, 0, 1, 1 so FR_4 = FR_5 = 0: Wilson.
    question = by_group["question"]
    assert (question["ci_unit"], question["ci_clusters"], question["ci_note"]) == ("answer", "5", "")
    assert question["ci_wilson"] == "fr_4 fr_5"
    assert float(question["fr_5_ci_low"]) == 0.0 and float(question["fr_5_ci_high"]) == pytest.approx(0.4345, abs=1e-4)
    assert float(question["mse_ci_low"]) < 3.0 < float(question["mse_ci_high"])
