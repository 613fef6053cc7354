import json

import pytest
from django.core.management import call_command

from annotation.models import Question
from tests.conftest import INEQMATH_SAMPLE

pytestmark = pytest.mark.django_db


def test_ineqmath_import_creates_bound_and_relation_questions():
    call_command("import_ineqmath", str(INEQMATH_SAMPLE))
    records = json.loads(INEQMATH_SAMPLE.read_text())
    assert Question.objects.count() == len(records)
    bound = Question.objects.get(external_id="0")
    assert bound.kind == "bound"
    assert bound.gold_answer == "$$C = 3$$"
    relation = Question.objects.get(external_id="626")
    assert relation.kind == "relation"
    assert relation.choices[1] == "(B) $\\geq$"
    assert relation.extra["theorems"] == records[6]["theorems"]
    listed = Question.objects.get(external_id="1")
    assert listed.extra["solution"] == records[1]["solution"]
    assert bound.exam.name == "IneqMath train"


def test_ineqmath_reimport_is_idempotent():
    call_command("import_ineqmath", str(INEQMATH_SAMPLE))
    call_command("import_ineqmath", str(INEQMATH_SAMPLE))
    assert Question.objects.count() == len(json.loads(INEQMATH_SAMPLE.read_text()))
