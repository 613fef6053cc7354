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
