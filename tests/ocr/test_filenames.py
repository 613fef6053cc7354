"""The file-name convention <student>_<question>_<page> and how question tokens resolve."""
import pytest

from core.stored_text import english
from ocr.filenames import QuestionIndex, parse_name


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("s0412_3-17_2.jpg", ("s0412", "3-17", 2)),
        ("s0412_3-17.pdf", ("s0412", "3-17", 1)),
        ("class_a_s07_q12_3.png", ("class_a_s07", "q12", 3)),
        ("dir/sub/s1_3-18_1.PNG", ("s1", "3-18", 1)),
        ("C:\\scans\\s2_3-18_4.tif", ("s2", "3-18", 4)),
        ("../../etc/passwd_3-17_1.png", ("passwd", "3-17", 1)),
        ("scan001.jpg", ("", "", 1)),
        ("_3-17_1.jpg", ("", "", 1)),
        ("s1_3-17_0.jpg", ("s1", "3-17", 1)),
        ("s1_3-17_007.jpg", ("s1", "3-17", 7)),
    ],
)
def test_parse_name(name, expected):
    parsed = parse_name(name)
    assert (parsed.student_id, parsed.question_token, parsed.page_number) == expected
    assert parsed.note == ""


@pytest.mark.parametrize("page", ["²", "٣", "9" * 25, "10000"])
def test_a_page_number_that_is_no_page_number_is_said_clearly(page):
    """int('²') used to raise: a valid image was refused with "an unexpected error occurred"."""
    parsed = parse_name(f"s5_3-07_{page}.png")
    assert (parsed.student_id, parsed.question_token, parsed.page_number) == ("s5", "3-07", 1)
    assert f"“{page[:30]}”" in parsed.note and "from 1 to 9999" in parsed.note


def test_question_numbers_are_ascii_digits(exam_questions):
    index = QuestionIndex(exam_questions["exam"])
    some = min(index.by_pk)
    arabic = str(some).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
    assert index.candidates(f"q{some}") == [some]
    assert index.candidates(f"q{arabic}") == [] and index.candidates("q" + "9" * 25) == []


def test_question_tokens_resolve_by_label_number_or_not_at_all(exam_questions):
    index = QuestionIndex(exam_questions["exam"])
    q317, q318 = exam_questions["3-17"], exam_questions["3-18"]
    assert index.resolve("3-17") == (q317.pk, None)
    assert index.resolve("3-18")[0] == q318.pk
    assert index.resolve(f"q{q318.pk}") == (q318.pk, None)
    assert index.resolve(str(q318.pk))[0] == q318.pk
    pk, note = index.resolve("5-1")
    note = english(note)  # the note is a stored-text part, shown in the reader's language
    assert pk is None
    assert "names 2 questions" in note and f"#{exam_questions['5-1a'].pk}" in note
    pk, note = index.resolve("9-99")
    note = english(note)
    assert pk is None and "No question labelled or numbered" in note


def test_a_number_that_is_also_a_label_is_ambiguous(exam_questions):
    q317 = exam_questions["3-17"]
    q318 = exam_questions["3-18"]
    q318.location = str(q317.pk)
    q318.save()
    index = QuestionIndex(q317.exam)
    assert index.resolve(str(q317.pk))[0] is None
    assert index.resolve(f"q{q317.pk}")[0] == q317.pk
