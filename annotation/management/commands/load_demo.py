from django.core.management.base import BaseCommand

from annotation import demo


class Command(BaseCommand):
    help = (
        "Load the demo data: the RealMath-Eval and IneqMath samples, the released judge outputs and "
        "meta-evaluation labels, a few assignments for the demo annotators, and finished runs of clearly named "
        "scripted judges (made-up scores and verdicts, recorded without any server). Idempotent."
    )

    def handle(self, *args, **options):
        self._write(demo.load_dataset())
        for part in demo.app_parts():  # the later apps' parts (annotation.demo): grading's judges, validity's experts
            self._write(part.load_demo())

    def _write(self, lines):
        for line in lines:
            self.stdout.write(line)
