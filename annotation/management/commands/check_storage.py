"""`manage.py check_storage`: write, read and delete a probe object in the file storage every machine
shares (docs/deploy.md), and say which storage and, on failure, which step failed and why."""
import time
import uuid

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext


def describe_storage(storage=default_storage):
    """Which storage this is, in words: the bucket and endpoint, or the folder."""
    bucket = getattr(storage, "bucket_name", None)
    if bucket:
        endpoint = getattr(storage, "endpoint_url", None) or "AWS S3"
        return gettext("S3 bucket %(bucket)s at %(endpoint)s") % {"bucket": bucket, "endpoint": endpoint}
    return gettext("the folder %(folder)s") % {"folder": getattr(storage, "location", settings.MEDIA_ROOT)}


class Command(BaseCommand):
    help = "Write, read back and delete a probe object in the file storage; say which storage and why it failed."

    def handle(self, *args, **options):
        where = describe_storage()
        name = f"realmath-probe/{uuid.uuid4().hex}.txt"
        payload = f"RealMath Workbench storage probe {name}".encode()
        steps = []
        step = gettext("write")
        try:
            started = time.monotonic()
            stored = default_storage.save(name, ContentFile(payload))
            steps.append((step, time.monotonic() - started))
            step = gettext("read")
            started = time.monotonic()
            with default_storage.open(stored, "rb") as handle:
                read = handle.read()
            steps.append((step, time.monotonic() - started))
            if read != payload:
                raise OSError(gettext("the object read back differs from the one written"))
            step = gettext("delete")
            started = time.monotonic()
            default_storage.delete(stored)
            steps.append((step, time.monotonic() - started))
            if default_storage.exists(stored):
                raise OSError(gettext("the object is still there after the delete"))
        except Exception as exc:  # any backend's error (botocore, OSError, ...): said, with the step
            raise CommandError(gettext("Storage check failed at the %(step)s step on %(where)s: %(error)s") % {
                "step": step, "where": where, "error": f"{type(exc).__name__}: {exc}"}) from exc
        timings = ", ".join(f"{label} {seconds * 1000:.0f} ms" for label, seconds in steps)
        self.stdout.write(gettext("Storage OK: %(where)s (%(timings)s).") % {"where": where, "timings": timings})
