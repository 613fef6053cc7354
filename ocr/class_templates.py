"""A class's scanned PDF: the roster says whose packet comes when, the template what each page holds.

A scanner gives one PDF for the whole class: packet after packet, each of the same number of
pages. Two small files say how to cut it:

ROSTER.csv, a header row with a ``student_id`` column (other columns, such as ``name``, are
allowed and not stored), then one row per student in the order of their packets::

    student_id,name
    s01,Li Lei
    s02,Han Meimei

TEMPLATE.json, the number of pages of a packet and, for each page of a packet (numbered from
1), the location label of the question it answers; ``null`` marks a cover page (kept beside the
packet, never OCR'd), ``"+"`` (or ``{"continues": true}``) a page that continues the question of
the page before it, and a label given again also means a further page of that answer::

    {"pages_per_student": 4,
     "pages": {"1": null, "2": "3-07", "3": "+", "4": "3-08"}}

An optional ``"redact"`` gives the regions no OCR engine, vision model or exported image may show
(a name line, a student number), in fractions ``[x0, y0, x1, y1]`` of the upright form (on a
page scanned askew they are found on the form inside the deskewed page: ``ocr.redaction``): a
list for every page of a packet, or an object from page number to a list::

    "redact": [[0.55, 0.0, 1.0, 0.08]]
    "redact": {"1": [[0, 0, 1, 0.3]], "2": [[0.55, 0, 1, 0.08]]}

Everything is checked before anything is stored; every problem found is reported at once.
This module only reads and checks (no writes); ``ocr.packets`` stores the batch.
"""
import csv
import io
import json
import math
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils.translation import gettext, ngettext

from annotation.models import Exam
from core.numbers import ascii_digits, json_int, parse_int

from .filenames import QuestionIndex

MAX_ROSTER_BYTES = 1024 * 1024
MAX_TEMPLATE_BYTES = 256 * 1024
MAX_STUDENT_ID = 200
CONTINUES = "+"
TEMPLATE_KEYS = {"pages_per_student", "pages", "redact"}
MAX_REGIONS_PER_PAGE = 20


class LayoutError(ValueError):
    """The roster or the template cannot be used; `problems` are sentences a person can act on."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__(" ".join(self.problems))


@dataclass
class PagePlace:
    """What one page of every packet holds: a question and its page number within the answer, or a cover."""

    question_id: int | None
    label: str = ""
    page_number: int = 1

    @property
    def cover(self) -> bool:
        return self.question_id is None


@dataclass
class ClassLayout:
    students: list
    places: list  # PagePlace per page of a packet, in page order
    template: dict = field(default_factory=dict)  # as stored on the batch

    @property
    def pages_per_student(self) -> int:
        return len(self.places)

    @property
    def expected_pages(self) -> int:
        return len(self.students) * self.pages_per_student

    def check_page_count(self, count: int) -> None:
        """Refuse a PDF whose page count is not packets x pages per packet."""
        if count != self.expected_pages:
            pdf = ngettext("The PDF has %(n)s page", "The PDF has %(n)s pages", count) % {"n": count}
            roster = ngettext("the roster has %(n)s student", "the roster has %(n)s students", len(self.students)) % {
                "n": len(self.students)}
            packet = ngettext("of %(n)s page", "of %(n)s pages", self.pages_per_student) % {"n": self.pages_per_student}
            raise LayoutError([
                gettext("%(pdf)s, but %(roster)s %(packet)s (%(expected)s pages): check that the roster lists every "
                        "packet in the PDF, in order, and that no page is missing or scanned twice.")
                % {"pdf": pdf, "roster": roster, "packet": packet, "expected": self.expected_pages}
            ])

    def place_of(self, pdf_index: int) -> tuple[str, PagePlace]:
        """(student id, PagePlace) of the page at `pdf_index` (from 0) of the class PDF."""
        packet, page = divmod(pdf_index, self.pages_per_student)
        return self.students[packet], self.places[page]


def read_layout(roster: bytes, template: bytes, exam: Exam) -> ClassLayout:
    """Read both files (bytes) against the questions of `exam`: a ClassLayout, or LayoutError with every problem."""
    problems, students, places, stored = [], [], [], {}
    try:
        students = read_roster(roster)
    except LayoutError as exc:
        problems.extend(exc.problems)
    try:
        places, stored = read_template(template, exam)
    except LayoutError as exc:
        problems.extend(exc.problems)
    if problems:
        raise LayoutError(problems)
    return ClassLayout(students, places, stored)


# --- the roster --------------------------------------------------------------------------------

def read_roster(data: bytes) -> list[str]:
    """Student ids in packet order from ROSTER.csv bytes; LayoutError lists what is wrong."""
    text = _text(data, "ROSTER.csv", MAX_ROSTER_BYTES)
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), _dialect(text)))
    except csv.Error as exc:
        raise LayoutError([gettext("ROSTER.csv is not a readable CSV file (%(exc)s).") % {"exc": exc}]) from exc
    rows = [(number, row) for number, row in enumerate(rows, start=1) if any(cell.strip() for cell in row)]
    if not rows:
        raise LayoutError([gettext("ROSTER.csv is empty: it needs a header row with a student_id column and one row per student.")])
    header_line, header = rows[0]
    names = [cell.strip().lstrip("\ufeff").lower() for cell in header]
    if "student_id" not in names:
        shown = ", ".join(cell.strip() for cell in header)[:200]
        raise LayoutError([gettext("ROSTER.csv has no student_id column in its header row (line %(header_line)s: %(shown)s).") % {"header_line": header_line, "shown": shown}])
    column = names.index("student_id")
    return _student_ids(rows[1:], column)


def _student_ids(rows, column):
    problems, students, seen = [], [], {}
    for line, row in rows:
        student = row[column].strip() if column < len(row) else ""
        if not student:
            problems.append(f"ROSTER.csv line {line} has no student_id.")
            continue
        if len(student) > MAX_STUDENT_ID:
            problems.append(f"ROSTER.csv line {line}: the student_id is longer than {MAX_STUDENT_ID} characters.")
            continue
        if student in seen:
            problems.append(f"ROSTER.csv lists student {student} twice (lines {seen[student]} and {line}).")
            continue
        seen[student] = line
        students.append(student)
    if not students and not problems:
        problems.append("ROSTER.csv lists no students: add one row per student under the header row.")
    if problems:
        raise LayoutError(problems)
    return students


def _dialect(text):
    """Comma, semicolon or tab separated (spreadsheets save all three)."""
    first_line = text.split("\n", 1)[0]
    try:
        return csv.Sniffer().sniff(first_line, delimiters=",;\t")
    except csv.Error:
        return csv.excel


def _text(data, name, limit):
    if data is None or not len(data):
        raise LayoutError([gettext("%(name)s is empty.") % {"name": name}])
    if len(data) > limit:
        raise LayoutError([gettext("%(name)s is %(value)s KB; the limit is %(value2)s KB.") % {"name": name, "value": len(data) // 1024, "value2": limit // 1024}])
    if b"\x00" in data:
        raise LayoutError([gettext("%(name)s is not a text file.") % {"name": name}])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:  # spreadsheets in Chinese locales save CSV as GBK/GB18030
        return data.decode("gb18030")
    except UnicodeDecodeError as exc:
        raise LayoutError([gettext("%(name)s is not UTF-8 (or GB18030) text.") % {"name": name}]) from exc


# --- the template ------------------------------------------------------------------------------

def read_template(data: bytes, exam: Exam) -> tuple[list[PagePlace], dict[str, Any]]:
    """([PagePlace per page of a packet], the template as stored) from TEMPLATE.json bytes."""
    text = _text(data, "TEMPLATE.json", MAX_TEMPLATE_BYTES)
    try:
        document = json.loads(text, parse_int=json_int)
    except json.JSONDecodeError as exc:
        raise LayoutError([gettext("TEMPLATE.json is not valid JSON (line %(lineno)s, column %(colno)s: %(msg)s).") % {"lineno": exc.lineno, "colno": exc.colno, "msg": exc.msg}]) from exc
    except RecursionError as exc:
        raise LayoutError([gettext("TEMPLATE.json is nested too deeply to be a template.")]) from exc
    except ValueError as exc:  # an integer literal longer than Python reads
        raise LayoutError([gettext("TEMPLATE.json is not valid JSON (%(msg)s).") % {"msg": exc}]) from None
    if not isinstance(document, dict):
        raise LayoutError([gettext('TEMPLATE.json must be an object: {"pages_per_student": K, "pages": {"1": "3-07", ...}}.')])
    problems = []
    unknown = sorted(set(document) - TEMPLATE_KEYS)
    if unknown:
        problems.append(gettext("TEMPLATE.json has unknown key(s) %(keys)s; it takes pages_per_student, pages "
                                "and redact.") % {"keys": ", ".join(map(repr, unknown))})
    count = _pages_per_student(document.get("pages_per_student"), problems)
    pages = document.get("pages")
    if not isinstance(pages, dict):
        problems.append('TEMPLATE.json needs "pages": an object from page number ("1", "2", ...) to a question label.')
    if problems or count is None:
        raise LayoutError(problems)
    places = _places(pages, count, QuestionIndex(exam), problems)
    redact = read_redaction(document.get("redact"), count, problems)
    if not problems and all(place.cover for place in places):
        problems.append("TEMPLATE.json gives no page a question: every page is a cover page.")
    if problems:
        raise LayoutError(problems)
    stored = {"pages_per_student": count, "pages": {
        str(n): None if p.cover else {"question": p.question_id, "label": p.label, "page": p.page_number}
        for n, p in enumerate(places, start=1)
    }}
    if redact:
        stored["redact"] = redact
    return places, stored


def read_redaction(value, count, problems) -> dict[str, list]:
    """The template's redaction regions as stored: {page of a packet ("1".."K"): [[x0, y0, x1, y1], ...]}.
    A list applies to every page; an object names pages. Problems are added to `problems`."""
    if value is None:
        return {}
    if isinstance(value, list):
        regions = _regions(value, gettext("TEMPLATE.json: redact"), problems)
        return {str(n): regions for n in range(1, count + 1)} if regions else {}
    if not isinstance(value, dict):
        problems.append(gettext("TEMPLATE.json: redact must be a list of regions [x0, y0, x1, y1] for every page, "
                                "or an object from page number to such a list (got %(value)s).") % {"value": _shown(value)})
        return {}
    stored = {}
    for key, regions in value.items():
        number = parse_int(key, minimum=1, maximum=count) if isinstance(key, str) and ascii_digits(key) else None
        if number is None:
            problems.append(gettext("TEMPLATE.json: redact names page %(key)s, which is not a page of a %(count)s-page "
                                    "packet (pages are \"1\" to \"%(count)s\").") % {"key": _shown(key), "count": count})
            continue
        if str(number) in stored:
            problems.append(gettext("TEMPLATE.json: redact gives page %(number)s twice.") % {"number": number})
            continue
        parsed = _regions(regions, gettext("TEMPLATE.json: redact, page %(number)s") % {"number": number}, problems)
        if parsed:
            stored[str(number)] = parsed
    return dict(sorted(stored.items(), key=lambda item: int(item[0])))


def _regions(value, where, problems):
    if not isinstance(value, list):
        problems.append(gettext("%(where)s must be a list of regions [x0, y0, x1, y1] (got %(value)s).")
                        % {"where": where, "value": _shown(value)})
        return []
    if len(value) > MAX_REGIONS_PER_PAGE:
        problems.append(gettext("%(where)s: at most %(limit)s regions per page (got %(count)s).")
                        % {"where": where, "limit": MAX_REGIONS_PER_PAGE, "count": len(value)})
        return []
    regions = []
    for n, region in enumerate(value, start=1):
        problem = region_problem(region)
        if problem:
            problems.append(gettext("%(where)s, region %(n)s: %(problem)s") % {"where": where, "n": n, "problem": problem})
        else:
            regions.append([float(v) for v in region])
    return regions


def region_problem(region) -> str | None:
    """Why `region` is not [x0, y0, x1, y1] in page fractions with x0 < x1 and y0 < y1; None if it is."""
    if not isinstance(region, list) or len(region) != 4:
        return gettext("a region is four numbers [x0, y0, x1, y1] in fractions of the page (got %(value)s).") % {
            "value": _shown(region)}
    for item in region:
        if isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item):
            return gettext("%(value)s is not a number; give fractions of the page from 0 to 1.") % {"value": _shown(item)}
    x0, y0, x1, y1 = region
    if not all(0 <= v <= 1 for v in region):
        return gettext("every value must lie between 0 and 1, fractions of the page's width and height (got "
                       "%(value)s).") % {"value": _shown(region)}
    if not (x0 < x1 and y0 < y1):
        return gettext("x0 must be less than x1 and y0 less than y1: the top left corner, then the bottom right "
                       "one (got %(value)s).") % {"value": _shown(region)}
    return None


def _shown(value):
    text = json.dumps(value, ensure_ascii=False)  # a value read from JSON (NaN included) writes back
    return text if len(text) <= 80 else text[:77] + "..."


def _pages_per_student(value, problems):
    limit = settings.OCR_MAX_CLASS_PDF_PAGES
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        problems.append(f"TEMPLATE.json: pages_per_student must be a whole number from 1 to {limit} (got {value!r}).")
        return None
    return value


def _places(pages, count, index, problems):
    keys = {}
    for key in pages:
        number = parse_int(key, minimum=1, maximum=count) if isinstance(key, str) and ascii_digits(key) else None
        if number is None or not 1 <= number <= count:
            problems.append(f"TEMPLATE.json: page {key!r} is not a page of a {count}-page packet (pages are \"1\" to \"{count}\").")
        elif number in keys:
            problems.append(f"TEMPLATE.json gives page {number} twice.")
        else:
            keys[number] = key
    places, pages_so_far = [], {}
    for number in range(1, count + 1):
        if number not in keys:
            problems.append(f"TEMPLATE.json does not say what page {number} holds; give a question label, "
                            f'"+" for a continuation, or null for a cover page.')
            places.append(PagePlace(None))
            continue
        place = _place(number, pages[keys[number]], places, index, problems)
        if not place.cover:
            pages_so_far[place.question_id] = pages_so_far.get(place.question_id, 0) + 1
            place.page_number = pages_so_far[place.question_id]
        places.append(place)
    return places


def _place(number, value, before, index, problems):
    if value is None:
        return PagePlace(None)
    if value == CONTINUES or value == {"continues": True}:
        previous = before[-1] if before else None
        if previous is None or previous.cover:
            problems.append(f"TEMPLATE.json: page {number} continues the page before it, but "
                            f"{'there is none' if previous is None else 'that is a cover page'}.")
            return PagePlace(None)
        return PagePlace(previous.question_id, previous.label)
    if not isinstance(value, str) or not value.strip():
        problems.append(f"TEMPLATE.json: page {number} must be a question label, \"+\" or null (got {json.dumps(value)[:80]}).")
        return PagePlace(None)
    label = value.strip()
    candidates = index.candidates(label)
    if len(candidates) == 1:
        return PagePlace(candidates[0], label)
    if not candidates:
        problems.append(f"TEMPLATE.json: page {number} names question “{label}”, which exam “{index.exam.name}” "
                        "does not have (use its location label, such as 3-07, or its number written q12).")
    else:
        listed = ", ".join(f"q{pk}" for pk in candidates)
        problems.append(f"TEMPLATE.json: page {number}: “{label}” names {len(candidates)} questions of exam "
                        f"“{index.exam.name}” ({listed}); write the one meant by its number, e.g. “q{candidates[0]}”.")
    return PagePlace(None)
