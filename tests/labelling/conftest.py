"""Fixtures of the labelling page tests: answers two annotators disagree on (`disagree`), assigning
answers (`assign`), the label page's JSON config (`config_of`), a page's query count
(`count_queries`), and the exam with judge results and eight annotators (`exam_setup`)."""
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.labelling import services
from annotation.models import Response
from grading.models import JudgeSetting

from ..conftest import make_user
from ..factories import make_responses, make_results, set_gold
from .helpers import full_label, labelled_setup


def disagree(annotator, annotator2, n=1, question=None):
    if question is None:
        question, responses = labelled_setup(n)
    else:
        responses = make_responses(question, n, start=Response.objects.count() + 1000)
    services.assign_responses(responses=Response.objects.filter(pk__in=[r.pk for r in responses]),
                              annotators=[annotator, annotator2], per_response=2, strategy="round_robin")
    for response in responses:
        services.save_label(response=response, user=annotator, data=full_label(3, 4), base_version=0, submit=True)
        services.save_label(response=response, user=annotator2, data=full_label(1, 1), base_version=0, submit=True)
    return question, responses


def assign(responses, *users, k=1):
    services.assign_responses(
        responses=Response.objects.filter(pk__in=[r.pk for r in responses]), annotators=list(users),
        per_response=k, strategy="round_robin",
    )


def config_of(page):
    html = page.content.decode()
    start = html.index('<script id="label-config" type="application/json">') + len('<script id="label-config" type="application/json">')
    return json.loads(html[start : html.index("</script>", start)])


def count_queries(client, url):
    with CaptureQueriesContext(connection) as ctx:
        page = client.get(url)
    assert page.status_code == 200
    return len(ctx.captured_queries)


@pytest.fixture
def exam_setup(db):
    """A blind exam with one two-answer question, judged by 'anchor-judge' (6 and 2) and by
    'other-judge' (one answer), eight annotators assigned to both answers, one gold."""
    question, responses = labelled_setup(2)
    exam = question.exam
    judge = JudgeSetting.objects.create(name="anchor-judge", version=1, kind=JudgeSetting.Kind.EXTERNAL, model="m")
    other = JudgeSetting.objects.create(name="other-judge", version=1, kind=JudgeSetting.Kind.EXTERNAL, model="m")
    make_results(judge, responses, [6, 2])
    make_results(other, responses[:1], [5], key_prefix="o")
    set_gold(responses[:1], [4])
    people = [make_user(f"anch-{i}", "annotator") for i in range(8)]
    services.assign_responses(responses=Response.objects.filter(pk__in=[r.pk for r in responses]),
                              annotators=people, per_response=8, strategy="round_robin")
    return {"exam": exam, "question": question, "responses": responses, "people": people}
