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
    config = make_stored_setting("rubric-judge")
    results = make_results(config, human + synthetic, [8, 3, 5, 6, 4], rationale="The student reaches $f(a)=1/2$.")
    return {"config": config, "results": results, "question": question}


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
    config = make_stored_setting(name)
    make_results(config, responses, [(i * 5) % 9 for i in range(2 * n)])
    return config
