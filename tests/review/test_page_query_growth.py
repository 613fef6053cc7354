"""The metrics page and the methods report read in a number of queries that does not grow with
the number of questions, exams, settings or answers (issue 28: under 1 s on the demo, 2 s at 100k
results; bench/metrics_bench.py times them)."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import (
    make_imported_gold,
    make_question,
    make_responses,
    make_results,
    make_stored_setting,
    set_gold,
)

pytestmark = pytest.mark.django_db

# 14 and 32 today (the report's study sections, issue 34: style, OCR attribution, anchoring, rubric
# re-judging, the geometry run pickers), with a little room
PAGES = {"grading:review_metrics": 16, "grading:methods_report": 36}


def _judged(n_questions, n_exams, tag, per_question=4):
    """`n_questions` questions over `n_exams` exams, answers with a gold and an imported gold
    label, and two settings that judged them all; the second setting."""
    responses = []
    for q in range(n_questions):
        question = make_question(f"[{tag}] question {q}: $x^{q}$.", exam_name=f"{tag} exam {q % n_exams}",
                                 location=f"{tag}-{q:02d}")
        responses += make_responses(question, per_question, source="human" if q % 2 else "synthetic",
                                    start=1000 * q)
    set_gold(responses, [i % 7 for i in range(len(responses))])
    make_imported_gold(responses, total=3)
    settings = [make_stored_setting(f"{tag}-judge-{k}") for k in range(2)]
    for k, setting in enumerate(settings):
        make_results(setting, responses, [(i + k) % 7 for i in range(len(responses))], key_prefix=f"{tag}{k}")
    return settings[-1]


@pytest.mark.parametrize("name", list(PAGES))
def test_query_count_does_not_grow_with_questions_exams_or_answers(reviewer_client, name,
                                                                   django_assert_max_num_queries):
    small = _judged(2, 1, "s")
    large = _judged(12, 4, "l", per_question=12)
    counts = []
    reviewer_client.get(reverse(name), {"setting": small.pk})  # session, role and template caches
    for setting in (small, large):
        with django_assert_max_num_queries(PAGES[name]), CaptureQueriesContext(connection) as queries:
            assert reviewer_client.get(reverse(name), {"setting": setting.pk}).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
