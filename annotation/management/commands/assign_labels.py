"""Ask for labels from a script, as the Assign page (and a scan batch's "Assign these") does."""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.labelling import scans, selectors, services
from annotation.management.exams import add_exam_argument, exam_option
from annotation.models import Assignment
from annotation.selectors import QuestionIndex
from core.numbers import parse_id

STRATEGIES = {
    "round-robin": Assignment.Strategy.ROUND_ROBIN,
    "least-loaded": Assignment.Strategy.LEAST_LOADED,
    "open": Assignment.Strategy.OPEN,
}


class Command(BaseCommand):
    help = (
        "Ask for K labels of every response of an exam (or of one scan batch of it, or of one question), "
        "given to the named annotators round-robin or least-loaded (or left in the open pool). "
        "Labels already asked for or given count towards K. With --batch, only responses whose pages are "
        "all verified are assigned."
    )

    def add_arguments(self, parser):
        add_exam_argument(parser, required=True)
        parser.add_argument("--batch", help="id of a scan batch of that exam: the responses its pages made")
        parser.add_argument("--question", help="the question's location label (3-07) or its number written q12")
        parser.add_argument("--annotators", default="", help="usernames, comma-separated (not needed for --strategy open)")
        parser.add_argument("--per-response", type=int, required=True, help="labels wanted per response (k)")
        parser.add_argument("--strategy", default="round-robin", choices=sorted(STRATEGIES))
        parser.add_argument("--by", default="", help="username recorded as the one who assigned")

    def handle(self, *args, **options):
        exam = self._exam(options["exam"])
        batch = self._batch(options["batch"], exam)
        question = self._question(options["question"], exam)
        annotators = self._annotators(options["annotators"])
        assigned_by = self._user(options["by"]) if options["by"] else None
        responses = selectors.assignable_responses(question, exam, batch=batch)
        try:
            result = services.assign_responses(
                responses=responses, annotators=annotators, per_response=options["per_response"],
                strategy=STRATEGIES[options["strategy"]], assigned_by=assigned_by,
            )
        except ValueError as exc:  # LabelInvalid is a ValueError
            raise CommandError(gettext("Nothing was assigned. %(exc)s") % {"exc": exc}) from exc
        self.stdout.write(self.style.SUCCESS(result.summary()))
        if batch is not None:
            waiting = scans.answers_waiting(batch, question)
            if waiting:
                self.stdout.write(gettext("%(waiting)s answer(s) of batch #%(pk)s are not verified yet and were left out.") % {"waiting": waiting, "pk": batch.pk})
        if result.short_of_annotators:
            self.stdout.write(self.style.WARNING(
                gettext("%(short_of_annotators)s label(s) could not be given out: too few annotators.") % {"short_of_annotators": result.short_of_annotators}
            ))

    def _exam(self, value):
        return exam_option(value)

    def _batch(self, value, exam):
        if value is None:
            return None
        batch = scans.scan_batch(parse_id(value)) if parse_id(value) is not None else None
        if batch is None:
            raise CommandError(gettext("No scan batch #%(value)s.") % {"value": value})
        if batch.exam_id != exam.pk:
            raise CommandError(gettext("Scan batch #%(pk)s belongs to exam “%(name)s”, not “%(name2)s”.") % {"pk": batch.pk, "name": batch.exam.name, "name2": exam.name})
        return batch

    def _question(self, value, exam):
        if value is None:
            return None
        candidates = QuestionIndex(exam).candidates(value)
        if not candidates:
            raise CommandError(gettext("No question labelled or numbered %(value)s in exam “%(name)s”.") % {"value": repr(value), "name": exam.name})
        if len(candidates) > 1:
            listed = ", ".join(f"q{pk}" for pk in candidates)
            raise CommandError(gettext("%(value)s names %(n_candidates)s questions of exam “%(name)s” (%(listed)s); give the one meant by its number.") % {"value": repr(value), "n_candidates": len(candidates), "name": exam.name, "listed": listed})
        return exam.questions.get(pk=candidates[0])

    def _annotators(self, value):
        names = [name.strip() for name in value.split(",") if name.strip()]
        users = {u.username: u for u in get_user_model().objects.filter(username__in=names)}
        unknown = [name for name in names if name not in users]
        if unknown:
            raise CommandError(gettext("No user named %(join)s.") % {"join": ', '.join(map(repr, unknown))})
        not_annotators = [n for n in names if not users[n].is_active or not users[n].groups.filter(name="annotator").exists()]
        if not_annotators:
            raise CommandError(gettext("Not an active annotator: %(join)s.") % {"join": ', '.join(map(repr, not_annotators))})
        return [users[name] for name in dict.fromkeys(names)]

    def _user(self, username):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(gettext("No user %(username)s.") % {"username": repr(username)})
        return user
