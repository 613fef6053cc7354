"""How every management command takes an exam: ``--exam NAME_OR_ID`` (one parser for all of them).

The value is an exam's name, else its id (`annotation.selectors.exam_named_or_numbered`: a name
wins, so an exam named "2026" is found by its name). When neither matches the command stops with
one message that says so and lists the exams there are. Commands add the option with
`add_exam_argument(parser)` and read it with `exam_option(options["exam"])` (or `exam_id_of`),
which also resolves a value given to `call_command(..., exam=...)` (argparse types only apply
to values on the command line). Imports, which may create the exam they are given, use
`add_exam_argument(parser, new_name=True)`: an unknown name is the name of a new exam.
"""
import argparse

from django.core.management.base import CommandError
from django.utils.translation import gettext

from ..models import Exam
from ..selectors import exam_choices, exam_named_or_numbered

SHOWN = 12  # exams listed in the error, at most


def no_exam_message(value):
    exams = list(exam_choices().order_by("name")[: SHOWN + 1])
    listed = ", ".join(f"{exam.name} ({exam.pk})" for exam in exams[:SHOWN]) + (", ..." if len(exams) > SHOWN else "")
    return gettext("No exam named or numbered %(value)s: no exam has that name, and none has that id. "
                   "Exams (name and id): %(exams)s.") % {"value": repr(value), "exams": listed or gettext("none yet")}


def exam_option(value):
    """The exam `value` names or numbers (an Exam is returned as it is, None stays None); else
    CommandError naming both ways it was looked up."""
    if value is None or isinstance(value, Exam):
        return value
    text = str(value).strip()
    exam = exam_named_or_numbered(text) if text else None
    if exam is None:
        raise CommandError(no_exam_message(value))
    return exam


def exam_name_option(value):
    """For imports: the name of the exam `value` names or numbers, else `value` itself (a new exam)."""
    if value is None or isinstance(value, Exam):
        return getattr(value, "name", value)
    text = str(value).strip()
    exam = exam_named_or_numbered(text) if text else None
    return exam.name if exam is not None else text


def exam_id_of(options):
    """The id (as text, as the response filters take it) of the exam ``--exam`` gave, or None."""
    exam = exam_option(options.get("exam"))
    return str(exam.pk) if exam is not None else None


def _exam_type(value):
    """`exam_option` as an argparse type: on the command line argparse prints the message with
    the usage (a CommandError raised while parsing would end in a traceback there)."""
    try:
        return exam_option(value)
    except CommandError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_exam_argument(parser, *, required=False, new_name=False, help=None):
    """Add ``--exam NAME_OR_ID`` to a command's parser."""
    default_help = (gettext("exam name or id (a new name makes a new exam)") if new_name
                    else gettext("exam name or id"))
    parser.add_argument("--exam", required=required, metavar="NAME_OR_ID",
                        type=exam_name_option if new_name else _exam_type, help=help or default_help)
