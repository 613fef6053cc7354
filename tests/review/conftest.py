"""Fixtures of the review page tests: judged cases with known disagreements, a question with its
checkpoints (the rubric pages), and `_grow` for the flat-query-count tests."""
import pytest

from tests.factories import (
    make_checkpoints,
    make_imported_gold,
    make_question,
    make_responses,
    make_results,
    make_stored_setting,
    set_gold,
)


@pytest.fixture
def cases():
    """Gold 5 everywhere; judge 8, 3, 5, 6 (human) and 4 (synthetic): |Δ| ≥ 2 for 8 and 3."""
    question = make_question("Show that $x^2 \\geq 0$.", location="3-07")
    human = make_responses(question, 4, source="human")
    synthetic = make_responses(question, 1, source="synthetic", start=50)
    set_gold(human + synthetic, [5] * 5)
    make_imported_gold(human + synthetic, total=5)
    setting = make_stored_setting("rubric-judge")
    results = make_results(setting, human + synthetic, [8, 3, 5, 6, 4], rationale="The student reaches $f(a)=1/2$.")
    return {"config": setting, "results": results, "question": question}


@pytest.fixture
def question():
    question = make_question(location="R-01")
    make_checkpoints(question)
    return question


def _grow(n, name):
    question = make_question(f"Growing {name}", location="G-01")
    responses = make_responses(question, n, source="human", start=10_000) + make_responses(
        question, n, source="synthetic", start=20_000
    )
    set_gold(responses, [i % 9 for i in range(2 * n)])
    setting = make_stored_setting(name)
    make_results(setting, responses, [(i * 5) % 9 for i in range(2 * n)])
    return setting


@pytest.fixture
def step_judged():
    """Five synthetic answers (model-x: 3, model-y: 2) each judged by the five IneqMath judges;
    1 = the judge passes the answer. Accuracies by hand: tests/review/test_validation.py."""
    from grading.models import JudgeSetting  # noqa: PLC0415 (the review fixtures above need no model)

    kinds = JudgeSetting.Kind
    verdicts = {
        kinds.INEQ_FINAL_ANSWER: [1, 1, 0, 1, 0], kinds.INEQ_TOY_CASE: [1, 0, 1, 1, 1],
        kinds.INEQ_LOGICAL_GAP: [1, 1, 1, 0, 1], kinds.INEQ_NUMERICAL_APPROXIMATION: [1, 1, 1, 1, 1],
        kinds.INEQ_NUMERICAL_COMPUTATION: [1, 1, 0, 1, 1],
    }
    question = make_question("Find the largest $C$ with $a+b \\geq C\\sqrt{ab}$.", location="", kind="bound")
    responses = make_responses(question, 5, source="synthetic", start=900)
    for response, model in zip(responses, ["model-x"] * 3 + ["model-y"] * 2):
        response.generator_model = model
        response.save()
    results = {kind: make_results(make_stored_setting(f"ineq {kind}", kind=kind), responses, marks)
               for kind, marks in verdicts.items()}
    return {"responses": responses, "results": results}
