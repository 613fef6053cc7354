from annotation.importers import import_realmath
from core.app_hooks import app_modules

from ._import_base import ImportCommand


class Command(ImportCommand):
    """Later apps add options through `release_import_option` on their AppConfig: a module with
    `add_arguments(parser)` and `handle(options, stdout)`, True when it has done the command
    (grading: `--prompt-set`, grading/judges/prompt_set_option.py)."""

    help = ("Import a RealMath-Eval release file (JSON array). Idempotent; all or nothing. With --prompt-set NAME "
            "(grading's option), nothing is created: the prompts of records matching answers already in the tool are "
            "kept as that named prompt set (a variant such as Verification-First), and unmatched records are reported.")
    importer = staticmethod(import_realmath)
    places_questions = True  # --overlap (annotation/importers/placement.py)

    def add_arguments(self, parser):
        super().add_arguments(parser)
        for option in app_modules("release_import_option"):
            option.add_arguments(parser)

    def handle(self, *args, **options):
        if any(option.handle(options, self.stdout) for option in app_modules("release_import_option")):
            return None
        return super().handle(*args, **options)
