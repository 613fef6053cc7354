from .dataset import Exam, ImportReport, Question, Response, RubricCheckpoint, RubricVersion, SubQuestion, content_hash
from .exports import ExportJob
from .imports import ImportJob
from .labels import Adjudication, Annotation, Assignment, LabelDraft, LabelSaveAttempt, LabelSummary, StepLabel

__all__ = [
    "Adjudication",
    "Annotation",
    "Assignment",
    "Exam",
    "ExportJob",
    "ImportJob",
    "ImportReport",
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
