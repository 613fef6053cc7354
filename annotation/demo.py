"""The demo data of `manage.py load_demo` (`make run`): the dataset's part here, then each later app's.

The dataset's part imports the RealMath-Eval and IneqMath samples and gives the demo annotators a
few assignments. An app adds its part by naming a module as `demo_section` on its AppConfig
(grading: `grading.demo`, the released judge outputs and the scripted runs); the module has
`load_demo()`, which loads its part (idempotent) and returns the lines to print. The apps are asked
in INSTALLED_APPS order, once the dataset's part is in. Everything is idempotent: running it again adds nothing.
"""
import io
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils.translation import gettext

from core.app_hooks import app_modules

from .labelling.services import assign_responses
from .models import Assignment, Response

DEMO_DIR = Path(settings.BASE_DIR) / "fixtures" / "demo"
DEMO_ANNOTATORS = ("annotator1", "annotator2")
REALMATH_EXAM = "RealMath-Eval sample"
INEQMATH_EXAM = "IneqMath train"


def load_dataset() -> list[str]:
    """The samples and the demo annotators' assignments; the lines to print."""
    lines = []
    for name in ("realmath_eval.json", "realmath_eval_llm_answer.json"):
        # A sample question already imported with a full release stays in the release's exam.
        lines += quietly("import_realmath", str(DEMO_DIR / name), exam=REALMATH_EXAM, overlap="keep")
    lines += quietly("import_ineqmath", str(DEMO_DIR / "ineqmath_train_sample.json"))
    return lines + _assign_demo_work()


def app_parts():
    """The later apps' demo modules (`demo_section`), in INSTALLED_APPS order."""
    return app_modules("demo_section")


def quietly(command, *args, **options) -> list[str]:
    """Run an import and keep its summary line only: the released sample files disagree with
    each other in places (a record's gt is not its response's gold, a label names an answer
    the sample does not have), which the import reports as notes. They are expected here;
    running the import on its own prints them."""
    captured = io.StringIO()
    call_command(command, *args, stdout=captured, **options)
    lines = [line for line in captured.getvalue().splitlines() if line.strip()]
    if len(lines) > 1:
        lines[1:] = [gettext("  (%(value)s more lines of notes on the released sample files: expected for the demo; `manage.py %(command)s %(name)s` alone prints them)") % {"value": len(lines) - 1, "command": command, "name": Path(args[0]).name}]
    return lines


def _assign_demo_work():
    annotators = list(get_user_model().objects.filter(username__in=DEMO_ANNOTATORS))
    if len(annotators) < 2 or Assignment.objects.filter(annotator__in=annotators).exists():
        return []
    responses = Response.objects.filter(source=Response.Source.HUMAN, question__location="3-07")
    assign_responses(responses=responses, annotators=annotators, per_response=2, strategy="round_robin")
    return [gettext("Assigned %(count)s human answers to %(join)s (2 labels each).") % {"count": responses.count(), "join": ', '.join(DEMO_ANNOTATORS)}]
