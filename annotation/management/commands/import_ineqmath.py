from annotation.importers import import_ineqmath

from ._import_base import ImportCommand


class Command(ImportCommand):
    help = "Import IneqMath records (bound / relation problems). Idempotent; all or nothing."
    importer = staticmethod(import_ineqmath)
