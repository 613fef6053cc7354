import io
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.utils.translation import gettext

from annotation.labelling.services import assign_responses
from annotation.models import Assignment, Exam, Response

DEMO_DIR = Path(settings.BASE_DIR) / "fixtures" / "demo"
DEMO_ANNOTATORS = ("annotator1", "annotator2")
REALMATH_EXAM = "RealMath-Eval sample"
INEQMATH_EXAM = "IneqMath train"


class Command(BaseCommand):
    help = (
        "Load the demo data: the RealMath-Eval and IneqMath samples, the released judge outputs and "
        "meta-evaluation labels, a few assignments for the demo annotators, and finished runs of clearly named "
        "scripted judges (made-up scores and verdicts, recorded without any server). Idempotent."
    )

    def handle(self, *args, **options):
        for name in ("realmath_eval.json", "realmath_eval_llm_answer.json"):
            # A sample question already imported with a full release stays in the release's exam.
            self._quietly("import_realmath", str(DEMO_DIR / name), exam=REALMATH_EXAM, overlap="keep")
        self._quietly("import_ineqmath", str(DEMO_DIR / "ineqmath_train_sample.json"))
        self._quietly("import_judge_results", str(DEMO_DIR / "meta_eval_input_examples.json"), setting="released-judge")
        self._quietly("import_meta_eval_labels", str(DEMO_DIR / "meta_eval_labels_examples.json"),
                      setting="released meta-eval labels")
        self._assign_demo_work()
        self._scripted_judges()
        self._demo_experts()

    def _quietly(self, command, *args, **options):
        """Run an import and print its summary line only: the released sample files disagree with
        each other in places (a record's gt is not its response's gold, a label names an answer
        the sample does not have), which the import reports as notes. They are expected here;
        running the import on its own prints them."""
        captured = io.StringIO()
        call_command(command, *args, stdout=captured, **options)
        lines = [line for line in captured.getvalue().splitlines() if line.strip()]
        if not lines:
            return
        self.stdout.write(lines[0])
        if len(lines) > 1:
            self.stdout.write(gettext("  (%(value)s more lines of notes on the released sample files: expected for the demo; `manage.py %(command)s %(name)s` alone prints them)") % {"value": len(lines) - 1, "command": command, "name": Path(args[0]).name})

    def _scripted_judges(self):
        from grading.demo import demo_exams, load_scripted_judges  # grading is a later app; it loads its own demo part

        realmath, ineqmath = demo_exams(REALMATH_EXAM, INEQMATH_EXAM)
        if realmath is None or ineqmath is None:
            return
        for line in load_scripted_judges(realmath_exam=realmath, ineqmath_exam=ineqmath):
            self.stdout.write(line)

    def _demo_experts(self):
        from validity.demo import load_demo_experts  # validity is a later app; it loads its own demo part

        exam = Exam.objects.filter(name=REALMATH_EXAM).first()
        line = load_demo_experts(exam) if exam is not None else ""
        if line:
            self.stdout.write(line)

    def _assign_demo_work(self):

        annotators = list(get_user_model().objects.filter(username__in=DEMO_ANNOTATORS))
        if len(annotators) < 2 or Assignment.objects.filter(annotator__in=annotators).exists():
            return
        responses = Response.objects.filter(source=Response.Source.HUMAN, question__location="3-07")
        assign_responses(responses=responses, annotators=annotators, per_response=2, strategy="round_robin")
        self.stdout.write(gettext("Assigned %(count)s human answers to %(join)s (2 labels each).") % {"count": responses.count(), "join": ', '.join(DEMO_ANNOTATORS)})
