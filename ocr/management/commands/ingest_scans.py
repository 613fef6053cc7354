"""Upload a folder of scans as one batch, the way the upload page does, and optionally wait for OCR."""
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.management.exams import add_exam_argument, exam_option
from ocr import packets, selectors, services
from ocr.engines import OCR_ENGINES

SUFFIXES = {".jpg", ".jpeg", ".png", ".tif", ".tiff", ".heic", ".heif", ".pdf"}


class _LazyFile:
    """A file read only when its turn comes in the batch."""

    def __init__(self, path):
        self.path = path

    def read(self):
        return self.path.read_bytes()


class Command(BaseCommand):
    help = (
        "Ingest every scan in DIR (named <student>_<question>_<page>.<ext>) as one batch of an exam, "
        "and queue OCR of each page. Files that cannot be read are reported; the others go on. "
        "Or ingest one PDF of a whole class, CLASS.pdf --roster ROSTER.csv --template TEMPLATE.json: "
        "checked whole, refused whole (nothing stored) when anything does not fit."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", metavar="DIR_OR_CLASS_PDF")
        add_exam_argument(parser, required=True, help="name or id of the exam the questions belong to")
        parser.add_argument("--roster", help="ROSTER.csv of a class PDF: a student_id column, packets in order")
        parser.add_argument("--template", help="TEMPLATE.json of a class PDF: pages_per_student and pages")
        parser.add_argument("--engine", default=settings.OCR_DEFAULT_ENGINE, choices=sorted(OCR_ENGINES))
        parser.add_argument("--name", default="", help="batch name")
        parser.add_argument("--user", default="", help="username recorded as the uploader")
        parser.add_argument("--recursive", action="store_true", help="also read sub-folders")
        parser.add_argument("--all-files", action="store_true", help="send every file, not only scan suffixes")
        parser.add_argument("--wait", action="store_true", help="wait until OCR of the batch has finished")

    def handle(self, *args, **options):
        directory = Path(options["directory"])
        if options["roster"] or options["template"]:
            return self._class_pdf(directory, options)
        if directory.is_file():
            raise CommandError(gettext("%(directory)s is a file: a class PDF needs --roster and --template (or pass a folder).") % {"directory": directory})
        if not directory.is_dir():
            raise CommandError(gettext("%(directory)s is not a directory.") % {"directory": directory})
        exam = self._exam(options["exam"])
        user = self._user(options["user"])
        pattern = "**/*" if options["recursive"] else "*"
        paths = sorted(
            p for p in directory.glob(pattern)
            if p.is_file() and (options["all_files"] or p.suffix.lower() in SUFFIXES)
        )
        if not paths:
            raise CommandError(gettext("No scan files in %(directory)s.") % {"directory": directory})
        uploads = [self._upload(path) for path in paths]
        try:
            batch, results = services.ingest_new_batch(exam=exam, engine=options["engine"], uploads=uploads, user=user,
                                                       name=options["name"])
        except services.BatchError as exc:
            raise CommandError(str(exc)) from exc
        for scan_file in results:
            style = self.style.SUCCESS if scan_file.status == "accepted" else self.style.WARNING
            self.stdout.write(style(f"{scan_file.status:9} {scan_file.original_name}: {scan_file.message}"))
        pages = sum(getattr(f, "n_new_pages", 0) for f in results)
        self.stdout.write(gettext("Batch #%(pk)s “%(name)s”: %(pages)s new page(s) queued for %(engine)s.") % {"pk": batch.pk, "name": batch.name, "pages": pages, "engine": batch.engine})
        if options["wait"]:
            self._wait(batch)

    def _class_pdf(self, path, options):
        if not (options["roster"] and options["template"]):
            raise CommandError(gettext("A class PDF needs both --roster ROSTER.csv and --template TEMPLATE.json."))
        if not path.is_file():
            raise CommandError(gettext("%(path)s is not a file: give the class's PDF.") % {"path": path})
        exam = self._exam(options["exam"])
        user = self._user(options["user"])
        roster, template = self._read(options["roster"]), self._read(options["template"])
        try:
            batch = packets.ingest_class_pdf(exam=exam, engine=options["engine"], upload=self._upload(path),
                                             roster=roster, template=template, user=user, name=options["name"])
        except packets.ClassScanRefused as exc:
            problems = "\n".join(f"  - {problem}" for problem in exc.problems)
            raise CommandError(gettext("%(name)s was not ingested; nothing was stored:\n%(problems)s") % {"name": path.name, "problems": problems}) from exc
        answers = batch.pages.filter(is_cover=False).count()
        self.stdout.write(self.style.SUCCESS(
            gettext("Batch #%(pk)s “%(name)s”: %(n_roster)s packets of %(pages_per_student)s pages; %(answers)s answer page(s) queued for %(engine)s.") % {"pk": batch.pk, "name": batch.name, "n_roster": len(batch.roster), "pages_per_student": batch.template['pages_per_student'], "answers": answers, "engine": batch.engine}
        ))
        if options["wait"]:
            self._wait(batch)

    def _read(self, name):
        try:
            return Path(name).read_bytes()
        except OSError as exc:
            raise CommandError(gettext("Cannot read %(name)s: %(value)s.") % {"name": name, "value": exc.strerror or exc}) from exc

    def _upload(self, path):
        return services.Upload(name=path.name, size=path.stat().st_size, source=_LazyFile(path))

    def _exam(self, value):
        return exam_option(value)

    def _user(self, username):
        if not username:
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(gettext("No user %(username)s.") % {"username": repr(username)})
        return user

    def _wait(self, batch):
        while True:
            progress = selectors.batch_progress(batch)
            self.stdout.write(gettext("OCR %(finished)s/%(total)s (%(failed)s failed)") % {"finished": progress['finished'], "total": progress['total'], "failed": progress['failed']})
            if progress["complete"]:
                return
            time.sleep(2)
