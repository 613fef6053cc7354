"""Import of our own full JSONL export: reproduces the data, idempotent, all or nothing.

Every line is checked before anything is written: its JSON (depth included), its type, and
every field of it and of what it nests against the column it goes to (`LINE_SHAPES`, and the
other apps' `global_shapes()` / `response_shapes()`), then what it refers to (questions, settings,
endpoints, and users when a reviewer imports). A refusal names the line and the field.

Who may import what (docs/security.md): an import started by a reviewer creates no user,
changes no role and creates no judge endpoint; an admin's import (page or API) and the command
line may do all three.
"""
import codecs
import functools
import io
import json
import zipfile
from datetime import date, datetime
from decimal import Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, transaction
from django.utils.translation import gettext

from accounts.roles import ROLES, is_admin
from accounts.services import ensure_role_groups
from core.json_guard import TOO_DEEP, json_problem, loads
from core.numbers import MAX_INT32, ascii_digits, parse_int

from ..importers.checks import Column, ListOf, MapOf, Obj, Refused, Shape, Value, check, check_finite, check_time, text
from ..importers.common import ImportFormatError, ImportResult, as_stream, finite_decimal, sha256_of, stream_size
from ..models import (
    Adjudication,
    Assignment,
    Exam,
    ImportReport,
    Label,
    Question,
    Response,
    RubricCheckpoint,
    RubricVersion,
    StepLabel,
    SubQuestion,
    content_hash,
)
from .sections import section_modules

CORE_TYPES = {"user", "exam", "question", "response"}


class UserRef(Shape):
    """A username a line names: checked like the column, and remembered (a reviewer's import
    must name only users who exist)."""

    def __init__(self, *, null=True):
        self.column = Column(get_user_model(), "username", null=null)

    def check(self, value, path, context):
        self.column.check(value, path, context)
        if value is not None and context is not None:
            context.setdefault("usernames", {}).setdefault(value, (context.get("line"), path))


def line_problem(number, path, problem):
    """The message of a line's field that cannot be imported: "line N, field PATH: PROBLEM."."""
    return gettext("line %(number)s, field %(field)s: %(problem)s.") % {"number": number, "field": path,
                                                                        "problem": problem}


def _field_problem(line, field, problem):
    return gettext("line %(number)s: field '%(field)s' %(problem)s.") % {"number": line["_line"], "field": field,
                                                                         "problem": problem}


def choice(values):
    values = [str(v) for v in values]

    def check_choice(value):
        if value not in values:
            raise ValueError(gettext("must be one of %(values)s; got %(value)s")
                             % {"values": ", ".join(values), "value": repr(str(value)[:40])})
    return Value(check_choice, null=False)


def whole(low, high=2**31 - 1, *, null=True):
    def check_whole(value):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(gettext("must be a whole number from %(low)s to %(high)s, got %(value)s")
                             % {"low": low, "high": high, "value": json.dumps(value)[:40]})
    return Value(check_whole, null=null)


def score(value):
    """Points as JSON numbers (sub-scores): finite, and of a size a score can have."""
    if abs(check_finite(value)) >= 100000:
        raise ValueError(gettext("is out of range"))


TIME = Value(check_time)
VERSION = whole(1)
SCORES = MapOf(Value(score), key_length=64)


def _one_label_each(label):
    if not isinstance(label, dict):
        return None
    return "(imported label)" if label.get("is_imported") else label.get("annotator")


@functools.cache
def line_shapes():
    """The shape of each line type of the core (other apps add theirs: global_shapes, response_shapes)."""
    user = Obj(None, shapes={"username": UserRef(null=False), "role": Value(choice(ROLES).function)},
               required=["username"])
    exam = Obj(Exam, ["name", "batch_date", "blind", "anchoring", "anchoring_setting"],
               shapes={"anchoring_seed": whole(0)}, required=["name"])
    question = Obj(
        Question,
        ["statement", "reference_solution", "full_score", "kind", "gold_answer", "location", "question_type", "level",
         "task_description", "external_id", "choices", "extra"],
        shapes={
            "key": text(64), "exam": Column(Exam, "name"), "rubric_version": VERSION,
            "sub_questions": ListOf(Obj(SubQuestion, ["label", "order", "max_points"], required=["label"]),
                                    unique=lambda s: s.get("label")),
            "checkpoints": ListOf(Obj(RubricCheckpoint, ["order", "cumulative_points", "text", "start", "end"],
                                      shapes={"sub_question": text(32)}, required=["order", "cumulative_points"])),
            "rubric_versions": ListOf(
                Obj(RubricVersion, ["reference_solution", "full_score", "checkpoints", "sub_questions", "note"],
                    shapes={"version": whole(1, null=False), "created": TIME}, required=["version"]),
                unique=lambda v: v.get("version"),
            ),
        },
        required=["key", "exam", "statement", "full_score", "kind"],
    )
    step = Obj(StepLabel, ["start", "end", "quote", "prefix", "suffix", "needs_review", "verdict", "awarded_points",
                           "comment"],
               shapes={"checkpoint": whole(0), "sub_question": text(32)})
    label = Obj(
        Label, ["is_imported", "total", "override_reason", "comment", "transcript_hash", "submitted", "submitted_at",
                "provenance", "version", "anchoring"],
        shapes={"annotator": UserRef(), "sub_scores": SCORES, "active_seconds": whole(0, 10**9),
                "checkpoint_marks": MapOf(choice(Label.Mark.values), key_length=20), "step_labels": ListOf(step)},
    )
    adjudication = Obj(
        Adjudication, ["gold_score", "reason", "previous_gold_score", "previous_gold_status", "label_totals"],
        shapes={"reviewer": UserRef(null=False), "chosen": text(150), "created": TIME}, required=["gold_score", "reviewer"],
    )
    assignment = Obj(Assignment, ["strategy", "completed_at"], shapes={"annotator": UserRef(null=False)},
                     required=["annotator"])
    response = Obj(
        Response,
        ["source", "student_id", "transcript", "generator_model", "generator_temperature", "generator_prompt", "status",
         "gold_score", "gold_status", "judge_query", "extra", "import_file", "import_index", "version"],
        shapes={"question": text(64), "created": TIME,
                "annotations": ListOf(label, unique=_one_label_each),
                "adjudications": ListOf(adjudication),
                "assignments": ListOf(assignment, unique=lambda a: a.get("annotator"))},
        required=["question", "source", "student_id", "transcript"],
    )
    shapes = {"user": user, "exam": exam, "question": question, "response": response}
    sections = {}
    for module in section_modules():
        shapes.update(getattr(module, "global_shapes", dict)())
        sections.update(getattr(module, "response_shapes", dict)())
    shapes["response"] = response.with_shapes(sections)
    return shapes


def _line_types():
    extra_types = set()
    for module in section_modules():
        extra_types |= set(getattr(module, "GLOBAL_TYPES", ()))
    return CORE_TYPES | extra_types


def iter_lines(stream, file_name, context=None):
    """Parse the lines of a binary file one at a time (memory holds one line); with a `context`
    (the check pass), also check each line's fields and note what it refers to.

    Lines end at "\\n" only: JSON text may hold other line separators (U+2028, ...) inside strings.
    """
    types = _line_types()
    shapes = line_shapes() if context is not None else None
    offset = 0
    stream.seek(0)
    for number, data in enumerate(stream, start=1):
        start, offset = offset, offset + len(data)
        if number == 1 and data.startswith(codecs.BOM_UTF8):
            data, start = data[len(codecs.BOM_UTF8) :], start + len(codecs.BOM_UTF8)
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ImportFormatError(gettext("%(file)s: not UTF-8 text (%(reason)s at byte %(at)s).")
                                      % {"file": file_name, "reason": exc.reason, "at": start + exc.start}) from exc
        if not content.strip():
            continue
        try:
            line = loads(content)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(gettext("line %(number)s: not valid JSON: %(message)s at column %(column)s.")
                                      % {"number": number, "message": exc.msg, "column": exc.colno}) from exc
        except RecursionError:  # the decoder recurses once per level of [[[...]]]
            raise ImportFormatError(gettext("line %(number)s: %(problem)s.") % {"number": number, "problem": TOO_DEEP}) from None
        if not isinstance(line, dict):
            raise ImportFormatError(gettext("line %(number)s: expected an object, got %(type)s.")
                                    % {"number": number, "type": type(line).__name__})
        kind = line.get("type")
        if kind not in types:
            raise ImportFormatError(gettext("line %(number)s: unknown line type %(kind)s.") % {"number": number, "kind": repr(kind)})
        if shapes is not None:
            context["line"] = number
            problem = json_problem(line)  # depth, NUL characters and integers too long to read, in any field
            if problem:
                raise ImportFormatError(line_problem(number, problem[0], problem[1]))
            try:
                check(shapes[kind], line, "", context)
                _note_line(line, kind, number, context)
            except Refused as exc:
                raise ImportFormatError(line_problem(number, exc.path, exc.problem)) from None
        line["_line"] = number
        yield line


def _note_line(line, kind, number, context):
    """What the line defines and refers to, for the checks after the last line."""
    defined, wanted = context.setdefault("defined", set()), context.setdefault("wanted", {})
    if kind == "question":
        if content_hash(line["statement"]) != line["key"]:
            raise Refused("key", gettext("does not match the question's statement (it is the SHA-256 of the statement)"))
        defined.add(("question", line["key"]))
        context.setdefault("full_scores", {})[line["key"]] = _most_points(
            [line["full_score"], *(v.get("full_score") for v in line.get("rubric_versions") or [])])
    elif kind == "response":
        if ("question", line["question"]) not in defined:
            wanted.setdefault(("question", line["question"]), (number, "question"))
        _note_scores(line, number, context)
    for module in section_modules():
        if hasattr(module, "note_line"):
            module.note_line(line, kind, number, context)


def _most_points(values):
    """The largest of a question's full scores (its current one and its rubric versions')."""
    return max(Decimal(str(value)) for value in values if value is not None)


def _line_scores(line):
    """(path, value, capped) of every score a response line holds: its gold, its labels' totals,
    its adjudications' golds and the other apps' (judge scores, ...). `capped`: must not exceed
    the question's full score. A gold score imported from a release file may (released files hold
    such records, reported when they were imported: docs/dataset-format.md); every other score may not."""
    yield "gold_score", line.get("gold_score"), line.get("gold_status") != Response.GoldStatus.IMPORTED
    for index, label in enumerate(line.get("annotations") or []):
        yield f"annotations[{index}].total", label.get("total"), True
    for index, adjudication in enumerate(line.get("adjudications") or []):
        yield f"adjudications[{index}].gold_score", adjudication.get("gold_score"), True
        yield f"adjudications[{index}].previous_gold_score", adjudication.get("previous_gold_score"), False
    for module in section_modules():
        yield from getattr(module, "line_scores", lambda line: ())(line)


def _note_scores(line, number, context):
    """Scores lie in [0, the question's full score] (issue 40: a judge score of 1e308 overflowed
    every metric of its setting; a gold of -1 was taken). Negative ones are refused here; the
    full score is known here when the file defines the question, else after the last line
    (check_references reads it from the database: the largest score per question is kept)."""
    key = line["question"]
    full = context.get("full_scores", {}).get(key)
    for path, value, capped in _line_scores(line):
        if value is None:
            continue
        number_value = Decimal(str(value))
        if number_value < 0:
            raise Refused(path, gettext("is %(value)s: a score cannot be negative") % {"value": value})
        if not capped:
            continue
        if full is not None:
            if number_value > full:
                raise Refused(path, _over_full(value, full))
            continue
        most = context.setdefault("most_points", {})
        if key not in most or number_value > most[key][0]:
            most[key] = (number_value, value, number, path)


def _over_full(value, full):
    return gettext("is %(value)s, more than the question's full score %(full)s") % {"value": value, "full": full}


def check_references(context, user):
    """After every line was read: what lines refer to exists (in the file or the database), and a
    reviewer's import names only users who exist. Raises ImportFormatError naming the first line."""
    problems = []
    wanted = context.get("wanted", {})
    questions = {key for kind, key in wanted if kind == "question"}
    found = set(Question.objects.filter(statement_hash__in=questions).values_list("statement_hash", flat=True))
    for key in questions - found:
        number, path = wanted[("question", key)]
        problems.append((number, path, gettext("refers to an unknown question %(key)s…") % {"key": key[:12]}))
    most = context.get("most_points", {})
    full_scores = dict(context.get("full_scores", {}))  # questions the file defines after their responses
    for key, full in Question.objects.filter(statement_hash__in=set(most)).values_list("statement_hash", "full_score"):
        full_scores[key] = max(full, full_scores.get(key, full))
    for key, full in RubricVersion.objects.filter(question__statement_hash__in=set(most)).values_list(
            "question__statement_hash", "full_score"):
        full_scores[key] = max(full, full_scores.get(key, full))
    for key, (number_value, value, number, path) in most.items():
        if key in full_scores and number_value > full_scores[key]:
            problems.append((number, path, _over_full(value, full_scores[key])))
    for module in section_modules():
        if hasattr(module, "check_references"):
            problems.extend(module.check_references(context, user))
    if user is not None and not is_admin(user):
        names = context.get("usernames", {})
        existing = set(get_user_model().objects.filter(username__in=list(names)).values_list("username", flat=True))
        for name in set(names) - existing:
            number, path = names[name]
            problems.append((number, path, gettext(
                "user %(name)s does not exist here, and only an admin's import creates users (ask an admin to "
                "import this file, or to create the user first)") % {"name": repr(name)}))
    if problems:
        number, path, problem = min(problems, key=lambda p: (p[0], p[1]))
        raise ImportFormatError(line_problem(number, path, problem))


def check_lines(stream, file_name, user=None):
    """Check every line, and what the lines refer to, before anything is written; returns how
    many lines there are. `user`: who imports (None: the command line)."""
    context = {"importer": user}
    count = sum(1 for _ in iter_lines(stream, file_name, context))
    if not count:
        raise ImportFormatError(gettext("%(file)s: the file holds no lines.") % {"file": file_name})
    check_references(context, user)
    return count


def _dec(value, line, field):
    if value is None:
        return None
    return finite_decimal(value, lambda text: _field_problem(line, field, text))


def _version_number(value, line, field):
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**31 - 1:
        raise ImportFormatError(_field_problem(line, field, gettext("must be a whole number from 1, got %(value)s")
                                               % {"value": repr(value)}))
    return value


def _load_rubric_versions(question, line):
    """The question's rubric version and its kept versions (files written before versions: 1, none)."""
    question.rubric_version = _version_number(line.get("rubric_version", 1), line, "rubric_version")
    question.save(update_fields=["rubric_version"])
    kept = line.get("rubric_versions") or []
    if not isinstance(kept, list) or not all(isinstance(v, dict) for v in kept):
        raise ImportFormatError(_field_problem(line, "rubric_versions", gettext("must be a list of objects")))
    for v in kept:
        row = RubricVersion.objects.create(
            question=question, version=_version_number(v.get("version"), line, "rubric_versions.version"),
            reference_solution=str(v.get("reference_solution") or ""),
            full_score=_dec(v.get("full_score", question.full_score), line, "rubric_versions.full_score"),
            checkpoints=v.get("checkpoints") if isinstance(v.get("checkpoints"), list) else [],
            sub_questions=v.get("sub_questions") if isinstance(v.get("sub_questions"), list) else [],
            note=str(v.get("note") or "")[:300],
        )
        created = _time(v.get("created"), line, "rubric_versions.created")
        if created is not None:
            RubricVersion.objects.filter(pk=row.pk).update(created=created)


def _time(value, line, field):
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except (TypeError, ValueError) as exc:
        raise ImportFormatError(_field_problem(line, field, gettext("is not an ISO date-time: %(value)s")
                                               % {"value": repr(value)})) from exc


def may_create(context):
    """Whether this import may create users, give roles and create endpoints: the command line
    (no importer) and an admin's import may; a reviewer's may not."""
    importer = context.get("importer")
    return importer is None or is_admin(importer)


def user_named(context, username):
    """The user a line names, created (without a password) when missing if the import may create
    users (a reviewer's import checked beforehand that every user it names exists); cached in
    `context`."""
    if not username:
        return None
    users = context["users"]
    if username not in users:
        User = get_user_model()
        if may_create(context):
            user, created = User.objects.get_or_create(username=username)
            if created:
                user.set_unusable_password()
                user.save()
        else:
            user = User.objects.get(username=username)
        users[username] = user
    return users[username]


def _load_user(line, context):
    user = user_named(context, line["username"])
    role = line.get("role")
    # Roles are restored for accounts that have none, and only by an import that may create
    # users; a reviewer's import never changes anyone's role.
    if role and may_create(context) and not user.groups.exists():
        user.groups.add(context["groups"][role])


def _load_exam(line, context):
    batch = line.get("batch_date")
    exam, _ = Exam.objects.get_or_create(
        name=line["name"],
        defaults={
            "blind": bool(line.get("blind", True)), "batch_date": date.fromisoformat(batch[:10]) if batch else None,
            "anchoring": bool(line.get("anchoring", False)), "anchoring_seed": _seed(line.get("anchoring_seed"), line),
            "anchoring_setting": str(line.get("anchoring_setting") or "")[:100],
        },
    )
    context["exams"][exam.name] = exam


def _load_question(line, context, result):
    key = line["key"]
    existing = Question.objects.filter(statement_hash=key).first()
    if existing:
        context["questions"][key] = existing
        result.count("questions_skipped")
        return
    if content_hash(line["statement"]) != key:
        raise ImportFormatError(line_problem(line["_line"], "key", gettext("does not match the question's statement")))
    exam = context["exams"].get(line["exam"]) or Exam.objects.get_or_create(name=line["exam"])[0]
    question = Question.objects.create(
        exam=exam, statement=line["statement"], statement_hash=key,
        reference_solution=line.get("reference_solution", ""), full_score=_dec(line["full_score"], line, "full_score"),
        kind=line["kind"], gold_answer=line.get("gold_answer", ""), location=line.get("location", ""),
        question_type=line.get("question_type", ""), level=line.get("level", ""),
        task_description=line.get("task_description", ""), external_id=line.get("external_id", ""),
        choices=line.get("choices") or [], extra=line.get("extra") or {},
    )
    subs = {
        s["label"]: SubQuestion.objects.create(
            question=question, label=s["label"], order=s.get("order", 0), max_points=_dec(s.get("max_points"), line, "max_points")
        )
        for s in line.get("sub_questions", [])
    }
    for c in line.get("checkpoints", []):
        RubricCheckpoint.objects.create(
            question=question, sub_question=subs.get(c.get("sub_question")), order=c["order"],
            cumulative_points=_dec(c["cumulative_points"], line, "cumulative_points"), text=c.get("text", ""),
            start=c.get("start", 0), end=c.get("end", 0),
        )
    _load_rubric_versions(question, line)
    context["questions"][key] = question
    result.count("questions_created")


def _order(key):
    """A checkpoint's order from a JSON key: ASCII digits only ("²".isdigit() is True and int("²")
    raises), through core.numbers; None for anything else."""
    return parse_int(key, minimum=0, maximum=MAX_INT32) if ascii_digits(key) else None


def _load_label(response, data, line, context):
    question = response.question
    checkpoints = {c.order: c for c in question.checkpoints.all()}
    subs = {s.label: s for s in question.sub_questions.all()}
    label = Label.objects.create(
        response=response, annotator=user_named(context, data.get("annotator")), is_imported=bool(data.get("is_imported")),
        sub_scores=data.get("sub_scores") or {}, total=_dec(data.get("total"), line, "total"),
        checkpoint_marks={
            str(checkpoints[_order(k)].pk) if _order(k) in checkpoints else k: v
            for k, v in (data.get("checkpoint_marks") or {}).items()
        },
        override_reason=data.get("override_reason", ""), comment=data.get("comment", ""),
        transcript_hash=data.get("transcript_hash", ""), submitted=bool(data.get("submitted")),
        submitted_at=_time(data.get("submitted_at"), line, "submitted_at"), provenance=data.get("provenance") or {},
        version=data.get("version", 1), active_seconds=_active_seconds(data.get("active_seconds"), line),
        anchoring=data.get("anchoring") if isinstance(data.get("anchoring"), dict) else {},
    )
    StepLabel.objects.bulk_create(
        StepLabel(
            label=label, checkpoint=checkpoints.get(s.get("checkpoint")), sub_question=subs.get(s.get("sub_question")),
            start=s.get("start"), end=s.get("end"), quote=s.get("quote", ""),
            prefix=s.get("prefix", ""), suffix=s.get("suffix", ""), needs_review=bool(s.get("needs_review")), verdict=s.get("verdict", "correct"),
            awarded_points=_dec(s.get("awarded_points"), line, "awarded_points"), comment=s.get("comment", ""),
        )
        for s in data.get("step_labels", [])
    )
    return label


def _load_response(line, context, result, modules):
    question = context["questions"].get(line["question"]) or Question.objects.filter(statement_hash=line["question"]).first()
    if question is None:  # checked before anything was written; kept for callers of the loaders
        raise ImportFormatError(line_problem(line["_line"], "question", gettext("refers to an unknown question %(key)s…")
                                            % {"key": line["question"][:12]}))
    transcript_hash = content_hash(line["transcript"])
    if Response.objects.filter(question=question, student_id=line["student_id"], transcript_hash=transcript_hash).exists():
        result.count("responses_skipped")
        result.count_in("skipped_by_exam", question.exam_id)
        # What the line carries stays as it is in the database: counted, not loaded again.
        result.count("labels_skipped", len(line.get("annotations", [])))
        result.count("adjudications_skipped", len(line.get("adjudications", [])))
        result.count("judge_results_skipped", len(line.get("judge_results", [])))
        return
    response = Response.objects.create(
        question=question, source=line["source"], student_id=line["student_id"], transcript=line["transcript"],
        transcript_hash=transcript_hash, generator_model=line.get("generator_model", ""),
        generator_temperature=line.get("generator_temperature"), generator_prompt=line.get("generator_prompt", ""),
        status=line.get("status", Response.Status.READY), gold_score=_dec(line.get("gold_score"), line, "gold_score"),
        gold_status=line.get("gold_status", Response.GoldStatus.NONE), judge_query=line.get("judge_query", ""),
        extra=line.get("extra") or {}, import_file=line.get("import_file", ""), import_index=line.get("import_index"),
        version=line.get("version", 1),
    )
    if line.get("created"):
        Response.objects.filter(pk=response.pk).update(created=_time(line["created"], line, "created"))
    raters = {}
    for data in line.get("annotations", []):
        label = _load_label(response, data, line, context)
        raters["imported" if label.is_imported else data.get("annotator")] = label
    for data in line.get("adjudications", []):
        adjudication = Adjudication.objects.create(
            response=response, reviewer=user_named(context, data.get("reviewer")), gold_score=_dec(data["gold_score"], line, "gold_score"),
            reason=data.get("reason", ""), chosen_label=raters.get(data.get("chosen")),
            previous_gold_score=_dec(data.get("previous_gold_score"), line, "previous_gold_score"),
            previous_gold_status=data.get("previous_gold_status", ""), label_totals=data.get("label_totals") or {},
            sub_scores=data.get("sub_scores") or {},
        )
        if data.get("created"):
            Adjudication.objects.filter(pk=adjudication.pk).update(created=_time(data["created"], line, "created"))
    for data in line.get("assignments", []):
        Assignment.objects.create(
            response=response, annotator=user_named(context, data.get("annotator")), strategy=data.get("strategy", "round_robin"),
            completed_at=_time(data.get("completed_at"), line, "completed_at"),
        )
    for module in modules:
        if hasattr(module, "import_response"):
            module.import_response(response, line, context)
    result.count("responses_created")
    result.count("labels_created", len(line.get("annotations", [])))
    result.count("adjudications_created", len(line.get("adjudications", [])))
    result.count("judge_results_created", len(line.get("judge_results", [])))


def _seed(value, line):
    """The anchoring experiment's seed of an exam line (absent: 0)."""
    if value in (None, ""):
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ImportFormatError(gettext("line %(number)s: anchoring_seed must be a whole number ≥ 0.") % {"number": line["_line"]})
    return value


def _active_seconds(value, line):
    if value in (None, ""):
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10**9:
        raise ImportFormatError(gettext("line %(number)s: active_seconds must be a whole number of seconds ≥ 0.")
                                % {"number": line["_line"]})
    return value


def read_dataset_upload(raw, file_name):
    """The JSONL bytes of an upload: the file itself, or `dataset.jsonl` inside an export's zip
    (refused when the zip declares it larger than REALMATH_IMPORT_MAX_BYTES; never read further)."""
    from ..importers.services import ZIP_MAGIC, dataset_member  # cycle: the importers import this module

    if len(raw) > settings.IMPORT_MAX_BYTES:
        raise ImportFormatError(gettext("%(file)s: file is larger than %(max)s bytes.")
                                % {"file": file_name, "max": settings.IMPORT_MAX_BYTES})
    if not raw.startswith(ZIP_MAGIC):
        return raw
    archive, info = dataset_member(io.BytesIO(raw), file_name)
    try:
        with archive.open(info) as handle:
            return handle.read(settings.IMPORT_MAX_BYTES + 1)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise ImportFormatError(gettext("%(file)s: not a readable zip (%(error)s).") % {"file": file_name, "error": exc}) from exc


def import_dataset(raw, file_name, *, user=None, on_progress=None, writer=None):
    """Import a full JSONL export given as bytes or a binary file.

    Two passes over the file: every line is checked first (nothing is written), then loaded;
    memory holds one line at a time (and the users, exams, questions and settings met so far).
    The load runs in one transaction, or, with a `writer` (`annotation.importers.write_windows`, a
    background job on SQLite), in short ones that the writer can undo.
    """
    stream = as_stream(raw)
    count = check_lines(stream, file_name, user)
    result = ImportResult(kind="dataset", file_name=file_name, sha256=sha256_of(stream))
    if writer is None:
        with transaction.atomic():
            return _load_lines(stream, file_name, user, on_progress, result, count, writer)
    return _load_lines(stream, file_name, user, on_progress, result, count, writer)


def _load_lines(stream, file_name, user, on_progress, result, count, writer):
    context = {"users": {}, "exams": {}, "questions": {}, "groups": ensure_role_groups(), "importer": user}
    modules = section_modules()
    size = stream_size(stream)
    step = writer.step if writer is not None else lambda: None
    for number, line in enumerate(iter_lines(stream, file_name), start=1):
        if on_progress and number % 500 == 0:
            on_progress(stream.tell(), size)
        step()
        try:
            _load_line(line, context, result, modules)
        except DatabaseError as exc:  # what the checks cannot know (a row added meanwhile, ...)
            raise ImportFormatError(gettext("line %(number)s: the database refused it (%(error)s).")
                                          % {"number": line["_line"], "error": exc}) from exc
    step()
    for key in ("questions_created", "questions_skipped", "responses_created", "responses_skipped",
                "labels_created", "adjudications_created", "judge_results_created"):
        result.counts.setdefault(key, 0)
    result.counts["lines"] = count
    report = ImportReport.objects.create(
        kind=result.kind, file_name=file_name, file_sha256=result.sha256, created_by=user, counts=result.counts
    )
    result.report_id = report.pk
    return result


def _load_line(line, context, result, modules):
    kind = line["type"]
    if kind == "user":
        _load_user(line, context)
    elif kind == "exam":
        _load_exam(line, context)
    elif kind == "question":
        _load_question(line, context, result)
    elif kind == "response":
        _load_response(line, context, result, modules)
    else:
        for module in modules:
            if kind in getattr(module, "GLOBAL_TYPES", ()):
                module.import_global(line, context)
