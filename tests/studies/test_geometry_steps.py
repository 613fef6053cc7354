"""The step splitter and the sub-question segments only cut the text, never rewrite it."""
import json
import random

import pytest

from annotation import steps as step_split
from studies.geometry import steps
from tests.conftest import REALMATH_HUMAN


def sample_texts():
    records = json.loads(open(REALMATH_HUMAN, encoding="utf-8").read())
    return [r["student_response"] for r in records]


@pytest.mark.parametrize("text", sample_texts()[:16])
def test_rule_split_of_real_answers_keeps_every_character(text):
    cut = step_split.split_steps(text)
    assert len(cut) > 3
    assert step_split.covers(text, cut)
    assert "".join(text.split()) == "".join("".join(s.text.split()) for s in cut)


def test_rule_split_on_random_text_keeps_every_character():
    alphabet = list("ab $\\()[]。∴所以;.\n 12Step:") + ["therefore ", "Step 3: ", "$x=1.5$", "\\[y\\]"]
    rng = random.Random(0)
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        assert step_split.covers(text, step_split.split_steps(text)), text


def test_cuts_at_lines_sentences_connectives_and_numbered_steps():
    text = "Let x = 2. Then y = 4\n∴ z = 6 所以 w = 1\nStep 2: done. Therefore $a.b = 1$ holds"
    assert [s.text for s in step_split.split_steps(text)] == [
        "Let x = 2.", "Then y = 4", "∴ z = 6", "所以 w = 1", "Step 2: done.", "Therefore $a.b = 1$ holds",
    ]


def test_never_cuts_inside_a_formula():
    text = "$f(x)=1.\n\\therefore g(x)=2$ and \\[a. b\\]"
    assert [s.text for s in step_split.split_steps(text)] == [text]


def test_llm_split_is_accepted_only_when_it_reproduces_the_text():
    text = "Since a = 1,\nb = 2.  So c = 3."
    output = "Step 1: Since a = 1, b = 2.\nStep 2: So c = 3."
    placed = step_split.align_steps(text, step_split.parse_step_lines(output))
    assert [s.text for s in placed] == ["Since a = 1,\nb = 2.", "So c = 3."]
    assert step_split.covers(text, placed)
    for changed in ("Step 1: Since a = 1, b = 2.\nStep 2: So c = 4.",   # a rewritten number
                    "Step 1: Since a = 1, b = 2.",                       # a dropped step
                    "Step 1: So c = 3.\nStep 2: Since a = 1, b = 2.",   # reordered
                    "Step 1: Since a = 1, b = 2.\nStep 2: So c = 3.\nStep 3: QED",  # added
                    "no steps at all"):
        assert step_split.align_steps(text, step_split.parse_step_lines(changed)) is None, changed


def test_sub_question_spans():
    text = "17.\n(1) first part\n**Part (2):** second\nFor (3), third"
    spans = steps.sub_question_spans(text, ["(1)", "(2)", "(3)", "(4)"])
    assert {k: text[a:b].strip() for k, (a, b) in spans.items()} == {
        "(1)": "(1) first part", "(2)": "**Part (2):** second", "(3)": "For (3), third"}
    assert steps.sub_question_spans("（1）甲\n（2）乙", ["(1)", "(2)"]) == {"(1)": (0, 5), "(2)": (5, 9)}


def test_sub_question_spans_read_roman_numerals_for_the_scores_arabic_labels():
    """The release's scores say "(2)" where the question and its answers say "(Ⅱ)" or "(II)"."""
    text = "(Ⅰ) sin B = 4/7.\n(II) h = 12/7."
    spans = steps.sub_question_spans(text, ["(1)", "(2)"])
    assert text[spans["(1)"][0]:spans["(1)"][1]].strip() == "(Ⅰ) sin B = 4/7."
    assert text[spans["(2)"][0]:].startswith("(II) h")
    assert steps.sub_question_spans("(1) a\n(2) b", ["(I)", "(II)"]) == {"(I)": (0, 6), "(II)": (6, 11)}
