from annotation.export.load import import_dataset

from ._import_base import ImportCommand


class Command(ImportCommand):
    help = "Import a full JSONL export of this tool (dataset.jsonl). Idempotent; all or nothing."
    importer = staticmethod(import_dataset)
    accepts_exam = False
