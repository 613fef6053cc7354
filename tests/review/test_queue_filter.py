"""One queue FilterSet (grading.review.selectors.QueueFilter) behind the disagreement page, the
API and the `disagreements` command: the same filters give the same cases everywhere, and a bad
value is said (a message on the page, 400 from the API, an error from the command).

Before, the command knew only --source and --category (and took "AB" for a category), and the
page and the API each listed the filters themselves."""
import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from grading.models import MetaEvaluation
from tests.conftest import api_client_for
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue():
    """Gold 5; judge 8, 2, 9 (human, question A) and 1 (synthetic, question B): all in the queue."""
    first = make_question("Show that $x^2 \\geq 0$.", location="1-01", level="high")
    second = make_question("Show that $|x| \\geq 0$.", location="1-02", level="low")
    human = make_responses(first, 3, source="human")
    synthetic = make_responses(second, 1, source="synthetic", start=50)
    set_gold(human + synthetic, [5] * 4)
    setting = make_stored_setting("queue-judge")
    results = make_results(setting, human + synthetic, [8, 2, 9, 1])
    MetaEvaluation.objects.create(result=results[0], category="B", proposed_by="expert")
    return {"setting": setting, "results": results, "first": first, "second": second}


def _page_ids(client, setting, params):
    page = client.get(reverse("grading:review_disagreements"), {"setting": setting.pk, **params})
    assert page.status_code == 200
    return page, sorted({int(pk) for pk in re.findall(rb'href="/grading/review/disagreements/(\d+)/', page.content)})


def _api_ids(api, setting, params):
    answer = api.get(reverse("api-review-disagreements"), {"setting": setting.pk, **params})
    return answer, sorted(row["result"] for row in answer.json()["results"]) if answer.status_code == 200 else None


def _command_ids(setting, params):
    out = StringIO()
    options = [f"--{key}={value}" for key, value in params.items()]
    call_command("disagreements", "--setting", setting.name, *options, stdout=out)
    return sorted(json.loads(line)["result"] for line in out.getvalue().splitlines())


@pytest.mark.parametrize("params, expected", [
    ({}, [0, 1, 2, 3]),
    ({"source": "synthetic"}, [3]),
    ({"question": "first"}, [0, 1, 2]),
    ({"level": "low"}, [3]),
    ({"direction": "over"}, [0, 2]),
    ({"direction": "under"}, [1, 3]),
    ({"category": "b"}, [0]),
    ({"state": "todo"}, [1, 2, 3]),
    ({"state": "confirmed"}, [0]),
    ({"attribution": "none"}, [0, 1, 2, 3]),
])
def test_page_api_and_command_agree(queue, reviewer, reviewer_client, params, expected):
    params = {key: str(queue[value].pk) if key == "question" else value for key, value in params.items()}
    want = sorted(queue["results"][i].pk for i in expected)
    assert _page_ids(reviewer_client, queue["setting"], params)[1] == want
    assert _api_ids(api_client_for(reviewer), queue["setting"], params)[1] == want
    assert _command_ids(queue["setting"], params) == want


@pytest.mark.parametrize("params", [{"category": "AB"}, {"direction": "sideways"}, {"question": "x1"},
                                    {"state": "maybe"}])
def test_a_bad_value_is_said_everywhere(queue, reviewer, reviewer_client, params):
    page, ids = _page_ids(reviewer_client, queue["setting"], params)
    assert ids == sorted(result.pk for result in queue["results"])  # left out, not applied
    assert b"left out" in page.content
    answer, _ = _api_ids(api_client_for(reviewer), queue["setting"], params)
    assert answer.status_code == 400 and next(iter(params)) in answer.json()
    with pytest.raises(CommandError, match=f"--{next(iter(params))}"):
        _command_ids(queue["setting"], params)
