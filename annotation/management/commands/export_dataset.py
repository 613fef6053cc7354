from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from annotation.export.writers import FORMATS, write_export
from annotation.management.exams import add_exam_argument, exam_id_of
from annotation.models import Response
from annotation.selectors import RESPONSE_FILTERS, filter_responses


class Command(BaseCommand):
    help = "Export the annotated dataset (filtered like the response list) into a folder with a manifest."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=FORMATS, default="jsonl")
        parser.add_argument("--out", required=True, help="output folder (created if missing)")
        for name in RESPONSE_FILTERS:
            if name == "exam":
                add_exam_argument(parser)
            else:
                parser.add_argument(f"--{name.replace('_', '-')}", dest=name, default=None)

    def handle(self, *args, **options):
        filters = {name: options[name] for name in RESPONSE_FILTERS if options.get(name) not in (None, "")}
        if "exam" in filters:  # the response filter takes the exam's id
            filters["exam"] = exam_id_of(options)
        queryset = filter_responses(Response.objects.all(), filters)
        if not queryset.exists():
            raise CommandError(gettext("No response matches these filters; nothing exported."))
        manifest = write_export(queryset, options["format"], options["out"], filters=filters)
        for name, info in manifest["files"].items():
            self.stdout.write(gettext("%(out)s/%(name)s: %(rows)s rows, %(bytes)s bytes, sha256 %(sha256)s…") % {"out": options['out'], "name": name, "rows": info['rows'], "bytes": info['bytes'], "sha256": info['sha256'][:16]})
        self.stdout.write(gettext("%(responses)s responses exported; manifest in %(out)s/manifest.json") % {"responses": manifest['counts']['responses'], "out": options['out']})
