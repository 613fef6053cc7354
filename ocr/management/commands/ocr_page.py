"""Print the text an OCR engine reads on one image, after the same preprocessing as uploads."""
import json
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from ocr import imaging
from ocr.engines import OCR_ENGINES, EngineFailed, EngineUnavailable, get_engine
from ocr.services import engine_input


class Command(BaseCommand):
    help = "Read one image (or the first page of a PDF) with an OCR engine and print the text."

    def add_arguments(self, parser):
        parser.add_argument("image", help="JPEG, PNG, TIFF, HEIC or PDF file")
        parser.add_argument("--engine", default=settings.OCR_DEFAULT_ENGINE, choices=sorted(OCR_ENGINES))
        parser.add_argument("--page", type=int, default=1, help="page of a PDF or multi-page TIFF (from 1)")
        parser.add_argument("--json", action="store_true", help="print text, tokens, engine version and time as JSON")
        parser.add_argument("--no-preprocess", action="store_true", help="give the engine the upright page as read")

    def handle(self, *args, **options):
        try:
            with open(options["image"], "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise CommandError(gettext("Cannot read %(image)s: %(exc)s") % {"image": options['image'], "exc": exc}) from exc
        try:
            page = self._page(data, options["page"])
        except imaging.UploadRefused as exc:
            raise CommandError(f"{options['image']}: {exc}") from exc
        engine = get_engine(options["engine"])
        if options["no_preprocess"]:
            image = page.convert("L")
        else:
            image, _ = engine_input(engine, imaging.prepare_page(page, reads=engine.input_kind), redact=())
        started = time.perf_counter()
        try:
            result = engine.recognise(image)
        except (EngineUnavailable, EngineFailed) as exc:
            raise CommandError(f"{engine.name}: {exc}") from exc
        seconds = time.perf_counter() - started
        if options["json"]:
            payload = {
                "engine": engine.name,
                "version": engine.version(),
                "seconds": round(seconds, 3),
                "text": result.text,
                "tokens": [token.scaled(1.0) for token in result.tokens],
            }
            self.stdout.write(json.dumps(payload, ensure_ascii=False))
        else:
            self.stdout.write(result.text)

    def _page(self, data, number):
        """The upright image of page `number` (from 1); only that page of a PDF is rendered."""
        read = imaging.read_upload(data)
        if not 1 <= number <= read.count:
            raise CommandError(gettext("There are %(count)s page(s); --page must be between 1 and %(count)s.") % {"count": read.count})
        if read.kind == "pdf":
            return imaging.render_pdf_page(data, number - 1).image
        for index, decoded in enumerate(read.pages, start=1):  # TIFF frames decode one at a time
            if index == number:
                return decoded.image
