from .dataset import Exam, ImportReport, Question, Response, RubricCheckpoint, RubricVersion, SubQuestion, content_hash
from .exports import ExportJob
from .imports import ImportJob
from .labels import Adjudication, Assignment, Label, LabelDraft, LabelSaveAttempt, LabelSummary, StepLabel

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
