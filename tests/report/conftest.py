"""Fixtures of the methods-report tests: the judge tests' loopback LLM server and environment,
a setting with five judged answers, and a RealMath-Eval-format import of 224 human answers."""
import hashlib
import json

import pytest
from django.core.management import call_command

from tests.conftest import REALMATH_HUMAN
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold
from tests.judges.conftest import _judge_environment, endpoint, llm_server  # noqa: F401  (shared fixtures)

N_ANSWERS = 224


@pytest.fixture
def realmath_224(db, tmp_path):
    """The sample's 32 human answers, each copied seven times (a new student hash and a marked
    text): 224 human answers of the RealMath-Eval format, imported the ordinary way."""
    records = json.loads(REALMATH_HUMAN.read_text(encoding="utf-8"))
    copies = []
    for copy in range(N_ANSWERS // len(records)):
        for record in records:
            student = hashlib.md5(f"{record['student_id']}:{copy}".encode()).hexdigest()  # noqa: S324 (an id, not security)
            copies.append({**record, "student_id": student, "student_response": f"{record['student_response']}\n(copy {copy})"})
    assert len(copies) == N_ANSWERS
    path = tmp_path / "realmath_224.json"
    path.write_text(json.dumps(copies, ensure_ascii=False), encoding="utf-8")
    call_command("import_realmath", str(path))
    return path


@pytest.fixture
def judged(db):
    """A setting that judged five answers of an exam whose name holds markup (it must be escaped)."""
    question = make_question(exam_name="Page exam <b>x</b>")
    responses = make_responses(question, 5)
    set_gold(responses, [1, 2, 3, 4, 5])
    setting = make_stored_setting(name="page-judge", model="m")
    make_results(setting, responses, [2, 2, 3, 5, 5])
    return setting
