from annotation.importers import import_realmath

from ._import_base import ImportCommand


class Command(ImportCommand):
    help = "Import a RealMath-Eval release file (JSON array). Idempotent; all or nothing."
    importer = staticmethod(import_realmath)
