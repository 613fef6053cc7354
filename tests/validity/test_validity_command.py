"""`manage.py validity`: the setting by name or id, the exam by name, JSON equal to the page's."""
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _run(*args):
    out = io.StringIO()
    call_command("validity", *args, stdout=out)
    return out.getvalue()


def test_by_name_and_exam_name_json_equals_the_page(validity_data, reviewer_client):
    data = json.loads(_run("scripted-judge", "--exam", "Validity exam", "--format", "json", "--seed", "3"))
    assert data["alt_test"]["passes"] and data["selection"]["exam"] == "Validity exam"
    exam_id = data["selection"]["exam_id"]
    page = reviewer_client.get(reverse("validity:page"), {"setting": validity_data.pk, "exam": exam_id, "seed": 3,
                                                          "format": "json"}).json()
    assert page == data


def test_table_by_id(validity_data):
    text = _run(str(validity_data.pk))
    assert "Alternative Annotator Test: omega" in text and "passes" in text


@pytest.mark.parametrize("args", [["no-such-setting"], ["scripted-judge", "--exam", "nope"],
                                  ["scripted-judge", "--alpha", "0.9"], ["scripted-judge", "--budget", "1"]])
def test_bad_arguments_are_clear_errors(validity_data, args):
    with pytest.raises(CommandError):
        _run(*args)
