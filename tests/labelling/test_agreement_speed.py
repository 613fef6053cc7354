"""The agreement page's query count stays flat as labels grow, and its figures are computed in
numbers, not per-label queries (it was the slowest page: scikit-learn's import and per-pair work)."""
import random
import time
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Label

from ..conftest import make_user
from ..factories import make_responses
from .helpers import rubric_question

pytestmark = pytest.mark.django_db
URL = "/agreement/"


def grow(questions, responses_per_question, annotators, seed=0):
    """Submitted labels by every annotator on every response, bulk-created; some with active time."""
    rng = random.Random(seed)
    people = [make_user(f"rater{seed}-{i}", "annotator") for i in range(annotators)]
    labels = []
    for q in range(questions):
        question = rubric_question(f"Question {seed}-{q}: find $x$.", exam_name=f"Speed exam {seed}")
        for response in make_responses(question, responses_per_question, start=q * 10_000):
            truth = rng.randint(0, 7)
            for person in people:
                total = max(0, min(7, truth + rng.choice([-1, 0, 0, 1])))
                labels.append(Label(
                    response=response, annotator=person, total=Decimal(total), submitted=True,
                    sub_scores={"(1)": min(3, total), "(2)": total - min(3, total)}, active_seconds=rng.randint(0, 300),
                ))
    Label.objects.bulk_create(labels, batch_size=1000)
    return len(labels)


def _get(client, params=None):
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        page = client.get(URL, params or {})
        elapsed = time.perf_counter() - started
    assert page.status_code == 200
    return len(queries), elapsed, page


def test_query_count_is_flat_and_large_data_stays_quick(reviewer_client):
    grow(2, 5, 3, seed=1)
    _get(reviewer_client)  # first request: templates compiled, modules imported
    small, _, _ = _get(reviewer_client)
    n = grow(6, 100, 5, seed=2)
    large, elapsed, page = _get(reviewer_client)
    assert small == large, (small, large)
    assert n == 3000 and page.context["report"]["overall"]["responses"] == 610
    assert len(page.context["work"]["people"]) == 8
    assert elapsed < 3.0, elapsed  # ~0.5 s on a quiet machine; the bound only catches a per-label blow-up


def test_the_agreement_figures_do_not_import_scikit_learn():
    """scikit-learn's import took seconds and 190 MB in every web process's first agreement page."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from annotation.labelling.agreement import agreement_report\n"
        "rows = [(r, 1, name, (r + shift) % 8) for r in range(40) for name, shift in (('a', 0), ('b', r % 2))]\n"
        "report = agreement_report(rows, {1: 7})\n"
        "assert report['pairs'][0]['kappa'] is not None\n"
        "print('sklearn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"
