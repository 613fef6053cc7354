"""Models of the annotation app: the dataset (dataset.py), background jobs (jobs.py, imports.py);
expert labels live beside their sub-package (annotation/labelling/models.py), export jobs beside
theirs (annotation/export/models.py). The app label stays `annotation`, so migrations do not move."""
from annotation.export.models import ExportJob
from annotation.labelling.models import (
    Adjudication,
    Assignment,
    Label,
    LabelDraft,
    LabelSaveAttempt,
    LabelSummary,
    StepLabel,
)

from .dataset import Exam, ImportReport, Question, Response, RubricCheckpoint, RubricVersion, SubQuestion, content_hash
from .imports import ImportJob

__all__ = [
    "Adjudication",
    "Assignment",
    "Exam",
    "ExportJob",
    "ImportJob",
    "ImportReport",
    "Label",
    "LabelDraft",
    "LabelSaveAttempt",
    "LabelSummary",
    "Question",
    "Response",
    "RubricCheckpoint",
    "RubricVersion",
    "StepLabel",
    "SubQuestion",
    "content_hash",
]
