from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

DEMO_DIR = Path(settings.BASE_DIR) / "fixtures" / "demo"


class Command(BaseCommand):
    help = "Load the demo data (RealMath-Eval and IneqMath samples from fixtures/demo). Idempotent."

    def handle(self, *args, **options):
        call_command("import_realmath", str(DEMO_DIR / "realmath_eval.json"), exam="RealMath-Eval sample", stdout=self.stdout)
        call_command(
            "import_realmath", str(DEMO_DIR / "realmath_eval_llm_answer.json"), exam="RealMath-Eval sample",
            stdout=self.stdout,
        )
        call_command("import_ineqmath", str(DEMO_DIR / "ineqmath_train_sample.json"), stdout=self.stdout)
