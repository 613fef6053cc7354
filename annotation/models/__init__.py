from .dataset import Exam, ImportReport, Question, Response, RubricCheckpoint, SubQuestion, content_hash
from .labels import Annotation, StepLabel

__all__ = [
    "Annotation",
    "Exam",
    "ImportReport",
    "Question",
    "Response",
    "RubricCheckpoint",
    "StepLabel",
    "SubQuestion",
    "content_hash",
]
