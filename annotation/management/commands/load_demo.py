from django.core.management.base import BaseCommand

from annotation import demo
from annotation.models import Exam


class Command(BaseCommand):
    help = (
        "Load the demo data: the RealMath-Eval and IneqMath samples, the released judge outputs and "
        "meta-evaluation labels, a few assignments for the demo annotators, and finished runs of clearly named "
        "scripted judges (made-up scores and verdicts, recorded without any server). Idempotent."
    )

    def handle(self, *args, **options):
        self._write(demo.load_dataset())
        for part in demo.app_parts():  # the later apps' parts (annotation.demo): grading's judges
            self._write(part.load_demo())
        self._write(self._demo_experts())

    def _write(self, lines):
        for line in lines:
            self.stdout.write(line)

    def _demo_experts(self):
        from validity.demo import load_demo_experts  # a later app, reached here until it names a demo_section

        exam = Exam.objects.filter(name=demo.REALMATH_EXAM).first()
        line = load_demo_experts(exam) if exam is not None else ""
        return [line] if line else []
