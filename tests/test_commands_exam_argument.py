"""Every management command takes ``--exam`` as a name or an id, through one parser
(annotation/management/exams.py), and says both when neither matches (issue 34).

Each command is run with the exam's *name*; what it hands on (the exam, or its id for the
response filters) is caught where the command's work begins, so the test needs no worker, LLM
or scan: the parsing is what is tested, the work itself has its own tests."""
import argparse

import pytest
from django.core.management import call_command, get_commands, load_command_class
from django.core.management.base import CommandError

from annotation.management import exams as exam_parser
from annotation.models import Exam
from grading.models import LlmEndpoint
from tests.factories import make_question, make_stored_setting

pytestmark = pytest.mark.django_db

NAME = "Spring 2026"


class Caught(Exception):
    """Raised by the stand-in of a command's first service call, with what it was given."""


def _catch(monkeypatch, target, name, pick):
    def stand_in(*args, **kwargs):
        raise Caught(pick(args, kwargs))
    monkeypatch.setattr(target, name, stand_in)


@pytest.fixture
def exam(db):
    make_question("Another question.", exam_name="Another exam")
    return make_question(exam_name=NAME).exam


def _setting_found(monkeypatch):
    from studies import selectors

    monkeypatch.setattr(selectors, "find_setting", lambda name, *a, **k: make_stored_setting(name=name))


def _probe_run(monkeypatch):
    from studies import services

    _setting_found(monkeypatch)
    _catch(monkeypatch, services, "start_probe_run", lambda a, k: k["exam"])


def _geometry(monkeypatch):
    from studies.geometry import services

    monkeypatch.setattr(services, "find_endpoint", lambda *a, **k: None)
    _catch(monkeypatch, services, "start_run", lambda a, k: k["exam"])


def _style_rewrite(monkeypatch):
    from grading.judges import services as judge_services
    from studies import style

    monkeypatch.setattr(judge_services, "find_or_create_endpoint", lambda *a, **k: None)
    _catch(monkeypatch, style, "selected_answers", lambda a, k: k["exam"])


def _generation(monkeypatch):
    from grading.generation import services as generation

    LlmEndpoint.objects.create(name="local", base_url="http://127.0.0.1:9/v1")
    _catch(monkeypatch, generation, "question_selection", lambda a, k: a[0]["exam"])


def _disagreements(monkeypatch):
    from grading.review import selectors

    _catch(monkeypatch, selectors, "queue_filter_errors", lambda a, k: a[0]["exam"])


def _compare(monkeypatch):
    from grading.management.commands import compare_settings
    from grading.review import selectors

    monkeypatch.setattr(compare_settings.Command, "_setting", lambda self, name: name)
    _catch(monkeypatch, selectors, "compare_settings", lambda a, k: k["exam"])


def _run_judges(monkeypatch):
    from grading.judges import services

    make_stored_setting(name="judge-a")
    _catch(monkeypatch, services, "estimate_judge_run", lambda a, k: k["params"]["exam"])


def _assign(monkeypatch):
    from annotation.labelling import selectors

    _catch(monkeypatch, selectors, "assignable_responses", lambda a, k: a[1])


def _ingest(monkeypatch):
    from ocr import services

    _catch(monkeypatch, services, "ingest_new_batch", lambda a, k: k["exam"])


def _export(monkeypatch):
    from annotation.management.commands import export_dataset

    _catch(monkeypatch, export_dataset, "filter_responses", lambda a, k: a[1]["exam"])


def _validity(monkeypatch):
    from validity import selectors

    _catch(monkeypatch, selectors, "selection_from", lambda a, k: a[0]["exam"])


def _release(monkeypatch):
    from annotation.management.commands import import_realmath

    _catch(monkeypatch, import_realmath.Command, "importer", lambda a, k: k["exam_name"])


def _ineqmath(monkeypatch):
    from annotation.management.commands import import_ineqmath

    _catch(monkeypatch, import_ineqmath.Command, "importer", lambda a, k: k["exam_name"])


# (command, arguments before --exam, how to catch what it does with the exam, what it hands on)
# "id": the exam's id as text (the response filters take that); "exam": the Exam; "name": its name.
CASES = {
    "probe_judge": (["--setting", "s", "--probe", "drop-final-answer"], _probe_run, "id"),
    "ocr_attribution": (["--setting", "s"], _probe_run, "id"),
    "style_ablation run": (["run", "--setting", "s"], _probe_run, "id"),
    "style_ablation rewrite": (["rewrite", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], _style_rewrite, "id"),
    "error_geometry": (["--lexical"], _geometry, "id"),
    "step_surprisal": (["--base-url", "http://127.0.0.1:9/v1", "--model", "m"], _geometry, "id"),
    "generate_synthetic": (["--endpoint", "local", "--models", "m"], _generation, "id"),
    "disagreements": ([], _disagreements, "id"),
    "compare_settings": (["a", "b"], _compare, "exam"),
    "run_judges": (["--setting", "judge-a", "--dry-run"], _run_judges, "id"),
    "assign_labels": (["--per-response", "1", "--strategy", "open"], _assign, "exam"),
    "ingest_scans": (["{tmp}"], _ingest, "exam"),
    "export_dataset": (["--out", "{tmp}"], _export, "id"),
    "validity": (["judge-a"], _validity, "name"),
    "import_realmath": (["{file}"], _release, "name"),
    "import_ineqmath": (["{file}"], _ineqmath, "name"),
}


def _args(case, tmp_path):
    (tmp_path / "f.json").write_text("[]")
    (tmp_path / "scans").mkdir(exist_ok=True)
    (tmp_path / "scans" / "s1_q1.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    words = case.split()
    rest = [a.format(tmp=tmp_path / "scans", file=tmp_path / "f.json") for a in CASES[case][0]]
    return words[0], rest


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("how", ["name", "id"])
def test_every_command_takes_the_exam_by_name_or_id(case, how, exam, monkeypatch, tmp_path):
    command, args = _args(case, tmp_path)
    CASES[case][1](monkeypatch)
    value = exam.name if how == "name" else str(exam.pk)
    with pytest.raises(Caught) as caught:
        call_command(command, *args, "--exam", value)
    expected = {"id": str(exam.pk), "exam": exam, "name": exam.name}[CASES[case][2]]
    assert caught.value.args[0] == expected


@pytest.mark.parametrize("case", sorted(set(CASES) - {"import_realmath", "import_ineqmath"}))
def test_an_exam_neither_named_nor_numbered_is_refused_naming_both(case, exam, monkeypatch, tmp_path):
    command, args = _args(case, tmp_path)
    CASES[case][1](monkeypatch)
    with pytest.raises(CommandError) as refused:
        call_command(command, *args, "--exam", "Sprnig 2026")
    message = str(refused.value)
    assert "No exam named or numbered 'Sprnig 2026': no exam has that name, and none has that id." in message
    assert f"Spring 2026 ({exam.pk})" in message  # the exams there are, by name and id


def test_an_import_takes_an_unknown_name_as_a_new_exam(exam, monkeypatch, tmp_path):
    command, args = _args("import_realmath", tmp_path)
    _release(monkeypatch)
    with pytest.raises(Caught) as caught:
        call_command(command, *args, "--exam", "Autumn 2026")
    assert caught.value.args[0] == "Autumn 2026"


def test_a_value_given_as_a_keyword_is_parsed_the_same_way(exam, monkeypatch):
    _disagreements(monkeypatch)
    with pytest.raises(Caught) as caught:
        call_command("disagreements", exam=NAME)  # call_command's keywords skip argparse's types
    assert caught.value.args[0] == str(exam.pk)


def test_a_name_made_of_digits_is_a_name_first(db):
    first = Exam.objects.create(name="first")
    digits = Exam.objects.create(name=str(first.pk + 100))
    assert exam_parser.exam_option(digits.name) == digits
    assert exam_parser.exam_option(str(first.pk)) == first
    with pytest.raises(CommandError, match="none has that id"):
        exam_parser.exam_option("²")  # no id: ASCII digits only


def _exam_options(parser):
    """The --exam actions of a parser and of its sub-commands' parsers."""
    found = []
    for action in parser._actions:
        if "--exam" in action.option_strings:
            found.append(action)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _exam_options(sub)
    return found


def test_every_command_with_an_exam_option_uses_the_one_parser_and_is_tested_here():
    with_exam = set()
    for name, app in get_commands().items():
        if app.startswith("django.") or app in ("rest_framework", "drf_spectacular", "django_celery_results"):
            continue
        try:
            command = load_command_class(app, name)
        except (ImportError, AttributeError):
            continue
        actions = _exam_options(command.create_parser("manage.py", name))
        for action in actions:
            assert action.type in (exam_parser._exam_type, exam_parser.exam_name_option), name
        if actions:
            with_exam.add(name)
    assert with_exam == {case.split()[0] for case in CASES}
