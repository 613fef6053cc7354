"""The rubric reader (annotation/rubric.py) on every question of the full RealMath-Eval release, and
one test per rubric form it reads: labels wherever a line opens with one, roman numerals mapped to
the scores' labels, inner enumerations, totals, markers that restart or do not increase."""
import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

from annotation.rubric import (
    CUMULATIVE,
    RESTART,
    data_problems,
    describe,
    reached_before_each,
    read_rubric,
    sub_question_label,
)

FULL = Path(__file__).resolve().parents[2] / "fixtures" / "realmath_eval_full"


def _questions():
    """{statement: record}, {statement: most points per sub-question label over both files}."""
    questions, most = {}, defaultdict(dict)
    for name in ("realmath_eval.json", "realmath_eval_llm_answer.json"):
        for record in json.loads((FULL / name).read_text()):
            key = record["problem_statement"]
            questions.setdefault(key, record)
            for k, v in record["sub_question_scores"].items():
                label = sub_question_label(k)
                most[key][label] = max(most[key].get(label, v), v)
    return questions, most


QUESTIONS, MOST = _questions()

# Question by question (location, full score): the sub-question of each step (its marker's points),
# the full points per sub-question, how the markers count.
EXPECTED = {
    ("3-07", 10): ({"(1)": [3], "(2)": [7, 9, 10]}, {"(1)": 3, "(2)": 7}, CUMULATIVE),
    ("3-08", 13): ({"(1)": [4], "(2)": [6, 8], "(3)": [13]}, {"(1)": 4, "(2)": 4, "(3)": 5}, CUMULATIVE),
    ("3-09", 10): ({"(1)": [2], "(2)": [6], "(3)": [10]}, {"(1)": 2, "(2)": 4, "(3)": 4}, CUMULATIVE),
    ("3-16", 14): ({"(1)": [3, 5, 6, 7, 7], "(2)": [9, 10, 12, 13, 14]}, {"(1)": 7, "(2)": 7}, CUMULATIVE),
    ("3-16", 13): ({"(1)": [5], "(2)": [8]}, {"(1)": 5, "(2)": 8}, RESTART),
    ("3-17", 14): ({"(1)": [2, 4, 5, 6, 7], "(2)": [8, 9, 10, 14]}, {"(1)": 7, "(2)": 7}, CUMULATIVE),
    ("3-17", 13): ({"(1)": [2, 7], "(2)": [10, 13]}, {"(1)": 7, "(2)": 6}, CUMULATIVE),
    ("3-17", 15): ({"(1)": [3], "(2)": [9], "(3)": [15]}, {"(1)": 3, "(2)": 6, "(3)": 6}, CUMULATIVE),
    ("3-18", 14): None,  # two questions share location and full score: checked by statement below
    ("3-18", 17): ({"(1)": [3], "(2)": [9], "(3)": [17]}, {"(1)": 3, "(2)": 6, "(3)": 8}, CUMULATIVE),
    ("3-19", 14): ({"(1)": [2, 3, 4], "(2)": [5, 6, 7, 9], "(3)": [11, 12, 13, 14]},
                   {"(1)": 4, "(2)": 5, "(3)": 5}, CUMULATIVE),
    ("3-20", 15): ({"(1)": [1, 2, 3, 4], "(2)": [5, 6, 7, 8, 9, 10], "(3)": [11, 12, 14, 15]},
                   {"(1)": 4, "(2)": 6, "(3)": 5}, CUMULATIVE),
    ("3-21", 14): ({"(1)": [4], "(2)": [6, 7, 8, 9], "(3)": [10, 12, 13, 13, 13, 14]},
                   {"(1)": 4, "(2)": 5, "(3)": 5}, CUMULATIVE),
}
BY_STATEMENT = {  # the two 14-point questions at 3-18
    "Given triangle ABC": ({"(1)": [1, 2, 3, 4, 5, 6, 7, 8], "(2)": [9, 10, 11, 12, 13, 14]},
                           {"(1)": 8, "(2)": 6}, CUMULATIVE),
    "Given the function f(x) = cos^2": ({"(1)": [3, 8], "(2)": [14]}, {"(1)": 8, "(2)": 6}, CUMULATIVE),
}


def _all_release_questions():
    out = []
    for name in ("realmath_eval.json",):
        seen = {}
        for record in json.loads((FULL / name).read_text()):
            seen.setdefault(record["problem_statement"], record)
        out += list(seen.values())
    return out


RELEASE = _all_release_questions()


def _expected(record):
    key = (record["question_location"], int(Decimal(str(record["full_score"]))))
    if EXPECTED.get(key) is not None:
        return EXPECTED[key]
    return next(v for k, v in BY_STATEMENT.items() if k in record["problem_statement"])


def test_the_release_has_fourteen_questions():
    assert len(RELEASE) == 14


@pytest.mark.parametrize("record", RELEASE, ids=lambda r: f"{r['question_location']}-{r['full_score']}")
def test_every_release_rubric_is_read_whole(record):
    steps, maxima, mode = _expected(record)
    reading = read_rubric(record["reference_answer"], list(record["sub_question_scores"]), record["full_score"])
    read_steps = defaultdict(list)
    for checkpoint in reading.checkpoints:
        read_steps[checkpoint.sub_label].append(int(checkpoint.cumulative_points))
    assert dict(read_steps) == steps
    assert reading.maxima == {label: Decimal(v) for label, v in maxima.items()}
    assert sum(reading.maxima.values()) == Decimal(str(record["full_score"]))
    assert reading.mode == mode
    assert reading.labels == sorted(sub_question_label(k) for k in record["sub_question_scores"])
    assert reading.problems == [] and reading.complete


def test_data_contradictions_are_reported_not_hidden():
    """Three questions' scores exceed what their markers give on one sub-question: each is said
    (3-17 of 13 points: 9 on (1) of 7; 3-18 of 14, the function: 11 on (2) of 6; 3-18 of 14, the
    triangle: 7 on (2) of 6)."""
    contradicted = {}
    for key, record in QUESTIONS.items():
        reading = read_rubric(record["reference_answer"], list(record["sub_question_scores"]), record["full_score"])
        problems = data_problems(reading, MOST[key])
        if problems:
            contradicted[(record["question_location"], key[:20])] = [p.values for p in problems]
    assert len(contradicted) == 3
    assert all(len(v) == 1 for v in contradicted.values())
    texts = [describe(p) for key, record in QUESTIONS.items()
             for p in data_problems(read_rubric(record["reference_answer"], list(record["sub_question_scores"]),
                                                record["full_score"]), MOST[key])]
    assert any("11 points on sub-question (2), more than the 6" in t for t in texts)


def test_label_after_the_question_number():
    reading = read_rubric("19. (1) When a = 1, f'(x) < 0. ------2 points\n(2) So f is bounded. ------5 points",
                          ["19.(1)", "19.(2)"], 5)
    assert [c.sub_label for c in reading.checkpoints] == ["(1)", "(2)"]
    assert reading.maxima == {"(1)": 2, "(2)": 3}


def test_label_in_the_middle_of_a_step_opens_its_sub_question():
    text = ("(1) a = 2. ------2 points\nHence the first part holds.\n\n(2) f'(x) = 2x. ------4 points\n"
            "In summary f is increasing.\n(3) Let g = f - 1. ------7 points")
    reading = read_rubric(text, ["(1)", "(2)", "(3)"], 7)
    assert [c.sub_label for c in reading.checkpoints] == ["(1)", "(2)", "(3)"]
    assert reading.checkpoints[2].text.startswith("(3) Let g")  # the summary of (2) is not a step of (3)
    assert reading.maxima == {"(1)": 2, "(2)": 2, "(3)": 3}


def test_mid_line_label_only_in_sequence_and_references_are_not_labels():
    text = "(1) a = 2. ------2 points (2) From (1) we get b. ------5 points. Using (1) again, c. ------6 points"
    reading = read_rubric(text, ["(1)", "(2)"], 6)
    assert [c.sub_label for c in reading.checkpoints] == ["(1)", "(2)", "(2)"]


def test_fullwidth_brackets_and_part_prefix():
    text = "（1）由题意 a=1。------3分\n\nPart (2) We get b = 2. ------5 points"
    reading = read_rubric(text, ["（1）", "（2）"], 5)
    assert [c.sub_label for c in reading.checkpoints] == ["(1)", "(2)"]  # the canonical label of a key
    assert reading.maxima == {"(1)": 3, "(2)": 2}


def test_roman_numerals_map_to_the_labels_the_scores_use():
    text = "(Ⅰ) sin B = 4/7. ------5 points\n(Ⅱ) h = 12/7. ------8 points"
    reading = read_rubric(text, ["3-16.(1)", "3-16.(2)"], 8)
    assert reading.scheme == "upper roman"
    assert [c.sub_label for c in reading.checkpoints] == ["(1)", "(2)"]


def test_inner_enumerations_are_not_sub_questions():
    text = ("(1) a = 1. ------2 points\n(2) Two cases.\n(i) When a > 0, ① holds. ------4 points\n"
            "(ii) When a < 0, ② holds. ------5 points\n(iii) So done. ------6 points\n(3) Last. ------9 points")
    reading = read_rubric(text, ["(1)", "(2)", "(3)"], 9)
    assert [c.sub_label for c in reading.checkpoints] == ["(1)", "(2)", "(2)", "(2)", "(3)"]
    assert reading.labels == ["(1)", "(2)", "(3)"]


def test_inner_arabic_cases_inside_a_roman_sub_question():
    text = "(I) n = 3.\n(1) 5 is not.\n(2) 6 is. ------2 points\n(II) m >= n + 3. ------6 points\n(III) min. ------10 points"
    reading = read_rubric(text, ["(1)", "(2)", "(3)"], 10)
    assert [c.sub_label for c in reading.checkpoints] == ["(1)", "(2)", "(3)"]


def test_a_lower_label_inside_a_sub_question_is_an_inner_case():
    text = "(1) a. ------2 points\n(2) Cases:\n(1) x > 0. ------4 points\n(2) x < 0. ------5 points\n(3) c. ------8 points"
    reading = read_rubric(text, ["(1)", "(2)", "(3)"], 8)
    assert [c.sub_label for c in reading.checkpoints] == ["(1)", "(2)", "(2)", "(3)"]


def test_a_stated_total_is_not_a_checkpoint():
    text = "16. (This subquestion total ------13 points)\n\n(I) x. ------5 points\n(II) y. ------8 points"
    reading = read_rubric(text, ["(1)", "(2)"], 13)
    assert [int(c.cumulative_points) for c in reading.checkpoints] == [5, 8]
    assert reading.mode == RESTART and reading.maxima == {"(1)": 5, "(2)": 8}


def test_markers_restarting_per_sub_question():
    text = "(1) a. ------2 points\nb. ------4 points\n(2) c. ------1 points\nd. ------6 points"
    reading = read_rubric(text, ["(1)", "(2)"], 10)
    assert reading.mode == RESTART and reading.maxima == {"(1)": 4, "(2)": 6}


def test_markers_not_in_increasing_text_order():
    text = "(1) a. ------3 points\nb. ------2 points\nc. ------4 points\n(2) d. ------7 points\ne. ------7 points"
    reading = read_rubric(text, ["(1)", "(2)"], 7)
    assert reading.mode == CUMULATIVE and reading.maxima == {"(1)": 4, "(2)": 3}


def test_a_deduction_note_is_not_a_marker():
    text = "(1) a. ------4 points\n(2) b. ------9 points\nn = 10.  ------ -1 points\n(3) c. ------14 points"
    assert [int(c.cumulative_points) for c in read_rubric(text, ["(1)", "(2)", "(3)"], 14).checkpoints] == [4, 9, 14]


def test_a_step_before_any_label_belongs_to_the_first_sub_question():
    text = "f(x) = sin(2x) + m. ------3 points\nChoose ①②:\n(I) m = 0. ------8 points\n(II) t. ------14 points"
    reading = read_rubric(text, ["(1)", "(2)"], 14)
    assert [c.sub_label for c in reading.checkpoints] == ["(1)", "(1)", "(2)"]


def test_what_cannot_be_read_is_reported_never_guessed():
    reading = read_rubric("(1) a. ------2 points\n(2) b. ------3 points", ["(1)", "(2)"], 10)
    assert reading.maxima == {} and not reading.complete
    assert [p.code for p in reading.problems] == ["points_do_not_add_up"]
    assert "full score is 10" in describe(reading.problems[0])
    missing = read_rubric("(1) a. ------4 points", ["(1)", "(2)"], 4)
    assert [p.code for p in missing.problems] == ["no_step"] and missing.maxima == {"(1)": 4}
    assert [p.code for p in read_rubric("No markers here.", ["(1)"], 4).problems] == ["no_markers"]


def test_without_keys_the_texts_own_labels_are_read():
    reading = read_rubric("(1) a. ------2 points\n(2) b. ------5 points")
    assert reading.labels == ["(1)", "(2)"] and reading.maxima == {"(1)": 2, "(2)": 3}


def test_an_edit_may_add_a_sub_question_the_keys_lack():
    text = "(1) a. ------2 points\n(2) b. ------5 points\n(3) c. ------7 points"
    assert read_rubric(text, ["(1)", "(2)"], 7).labels == ["(1)", "(2)"]
    assert read_rubric(text, ["(1)", "(2)"], 7, new_labels=True).labels == ["(1)", "(2)", "(3)"]


def test_reached_before_each_group():
    assert reached_before_each([[2, 3], [5, 7]], 7) == (CUMULATIVE, [0, 3])
    assert reached_before_each([[2, 3], [1, 4]], 7) == (RESTART, [0, 0])
