"""Write synthetic control-group answers over a model × temperature grid.

    python manage.py generate_synthetic --endpoint local --models qwen2.5-7b,llama3-8b \\
        --temperatures 0,0.5,1 --per-cell 1 [--question 3 --question 4 | --exam 1 | --kind bound] [--inline]
"""
import time

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.management.exams import add_exam_argument, exam_id_of
from annotation.models import Question
from grading.generation import selectors
from grading.generation import services as generation
from grading.models import GenerationRun, LlmEndpoint


class Command(BaseCommand):
    help = "Generate synthetic (student-persona) answers as responses."

    def add_arguments(self, parser):
        parser.add_argument("--endpoint", required=True, help="Endpoint name.")
        parser.add_argument("--models", required=True, help="Comma-separated model names.")
        parser.add_argument("--temperatures", default="0,0.5,1")
        parser.add_argument("--per-cell", type=int, default=1)
        parser.add_argument("--question", type=int, action="append", help="Question id (repeatable).")
        add_exam_argument(parser)
        parser.add_argument("--kind", choices=Question.Kind.values)
        parser.add_argument("--level", choices=["low", "high"])
        parser.add_argument("--max-tokens", type=int, default=4096)
        parser.add_argument("--name", default="")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--inline", action="store_true", help="Do the work in this process (no Celery worker).")
        mode.add_argument("--wait", action="store_true", help="Queue it, then follow the progress.")

    def handle(self, *args, **options):
        endpoint = LlmEndpoint.objects.filter(name=options["endpoint"]).first()
        if endpoint is None:
            raise CommandError(gettext("No endpoint %(endpoint)s.") % {"endpoint": repr(options['endpoint'])})
        try:
            temperatures = [float(t) for t in options["temperatures"].split(",") if t.strip()]
        except ValueError as exc:
            raise CommandError(gettext("--temperatures takes numbers separated by commas.")) from exc
        questions = Question.objects.all()
        if options["question"]:
            questions = questions.filter(pk__in=options["question"])
        params = {k: str(options[k]) for k in ("kind", "level") if options.get(k)}
        if options.get("exam"):
            params["exam"] = exam_id_of(options)
        questions = generation.question_selection(params) & questions
        try:
            run = generation.start_generation_run(
                endpoint=endpoint, models=options["models"].split(","), temperatures=temperatures,
                per_cell=options["per_cell"], questions=questions, max_tokens=options["max_tokens"],
                name=options["name"], enqueue=not options["inline"],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(gettext("Generation run %(pk)s: %(n_items)s answers to write.") % {"pk": run.pk, "n_items": run.n_items})
        if options["inline"]:
            run = generation.run_generation_inline(run)
        elif options["wait"]:
            while run.status == GenerationRun.Status.RUNNING:
                time.sleep(1.0)
                run.refresh_from_db()
        p = selectors.generation_progress(run)
        self.stdout.write(
            gettext("Run %(pk)s: %(status)s · %(ok)s written, %(error)s failed, %(pending)s pending · tokens %(prompt_tokens)s in / %(completion_tokens)s out · cost %(cost)s") % {"pk": run.pk, "status": run.get_status_display(), "ok": p['ok'], "error": p['error'], "pending": p['pending'], "prompt_tokens": p['prompt_tokens'], "completion_tokens": p['completion_tokens'], "cost": p['cost']}
        )
