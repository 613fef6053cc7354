from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from annotation.labelling.services import assign_responses
from annotation.models import Assignment, Response

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
        out = {"stdout": self.stdout}
        for name in ("realmath_eval.json", "realmath_eval_llm_answer.json"):
            call_command("import_realmath", str(DEMO_DIR / name), exam=REALMATH_EXAM, **out)
        call_command("import_ineqmath", str(DEMO_DIR / "ineqmath_train_sample.json"), **out)
        call_command("import_judge_results", str(DEMO_DIR / "meta_eval_input_examples.json"),
                     setting="released-judge", **out)
        call_command("import_meta_eval_labels", str(DEMO_DIR / "meta_eval_labels_examples.json"),
                     setting="released meta-eval labels", **out)
        self._assign_demo_work()
        self._scripted_judges()

    def _scripted_judges(self):
        from grading.demo import demo_exams, load_scripted_judges  # grading is a later app; it loads its own demo part

        realmath, ineqmath = demo_exams(REALMATH_EXAM, INEQMATH_EXAM)
        if realmath is None or ineqmath is None:
            return
        for line in load_scripted_judges(realmath_exam=realmath, ineqmath_exam=ineqmath):
            self.stdout.write(line)

    def _assign_demo_work(self):

        annotators = list(get_user_model().objects.filter(username__in=DEMO_ANNOTATORS))
        if len(annotators) < 2 or Assignment.objects.filter(annotator__in=annotators).exists():
            return
        responses = Response.objects.filter(source=Response.Source.HUMAN, question__location="3-07")
        assign_responses(responses=responses, annotators=annotators, per_response=2, strategy="round_robin")
        self.stdout.write(f"Assigned {responses.count()} human answers to {', '.join(DEMO_ANNOTATORS)} (2 labels each).")
