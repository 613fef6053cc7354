"""The file-name convention that attaches an uploaded page to a student and a question.

    <student>_<question>_<page>.<ext>      e.g. s0412_3-17_2.jpg
    <student>_<question>.<ext>             page 1 (or, for a PDF or multi-page TIFF, pages 1, 2, ...)

`<question>` is the question's location label within the batch's exam (e.g. `3-17`), or its
number in this workbench written `q12` (or just `12` when no label reads `12`). The student id
may itself contain underscores; the question and page are read from the right. A name that
does not follow the convention, or names no single question, leaves the page unassigned with a
note; assign it on the batch page.
"""
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop as N

from annotation import selectors
from core.numbers import parse_int
from core.stored_text import part

MAX_PAGE_NUMBER = 9999  # a page of one answer; far beyond any scan, well inside the column


@dataclass
class ParsedName:
    student_id: str = ""
    question_token: str = ""
    page_number: int = 1
    note: str = ""  # what in the name could not be read (the page still goes in, as page 1)


def parse_name(name):
    """Split a file name into student id, question token and first page number."""
    base = PureWindowsPath(PurePosixPath(name or "").name).name
    stem = base.rsplit(".", 1)[0] if "." in base else base
    stem = stem.strip()
    parts = stem.rsplit("_", 2)
    if len(parts) == 3 and parts[2].isdigit():  # str.isdigit: also "²", "٣": read by core.numbers
        if not (parts[0] and parts[1]):
            return ParsedName()
        number = parse_int(parts[2], minimum=0, maximum=MAX_PAGE_NUMBER)
        if number is None:
            return ParsedName(parts[0], parts[1], 1, _(
                "The page number “%(value)s” in the file name is not a whole number from 1 to %(max)s "
                "(digits 0-9); the page was taken as page 1: correct it on the batch page."
            ) % {"value": parts[2][:30], "max": MAX_PAGE_NUMBER})
        return ParsedName(parts[0], parts[1], max(1, number))
    parts = stem.rsplit("_", 1)
    if len(parts) == 2 and parts[0] and parts[1]:
        return ParsedName(parts[0], parts[1], 1)
    return ParsedName()


# Notes a page keeps on why it has no question (Page.assignment_note, in English; pages show them
# in the reader's language: Page.assignment_note_text).
NO_QUESTION = N("No question labelled or numbered “%(token)s” in exam “%(exam)s”.")
SEVERAL_QUESTIONS = N("“%(token)s” names %(n)s questions in exam “%(exam)s” (%(listed)s); choose one on the batch page.")
NOT_THE_NAME_FORMAT = N("The name does not follow <student>_<question>_<page>; assign the page on the batch page.")
ASSIGNMENT_NOTES = (NO_QUESTION, SEVERAL_QUESTIONS, NOT_THE_NAME_FORMAT)


class QuestionIndex(selectors.QuestionIndex):
    """The questions of one exam by location label or number (annotation's index), with the note a
    page keeps when its name chooses no single question."""

    def resolve(self, token):
        """(question pk or None, note): the note (a core.stored_text part, or None) says why no
        question was chosen."""
        if not token:
            return None, None
        candidates = self.candidates(token)
        if len(candidates) == 1:
            return candidates[0], None
        if not candidates:
            return None, part(NO_QUESTION, token=token, exam=self.exam.name)
        listed = ", ".join(f"#{pk}" for pk in candidates)
        return None, part(SEVERAL_QUESTIONS, token=token, n=len(candidates), exam=self.exam.name, listed=listed)
