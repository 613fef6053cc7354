"""Models of the grading app, each beside its sub-package: judge settings, runs and results
(grading/judges/models.py), the judge-vs-human review: meta-evaluation and step-judge
validation (grading/review/models.py), and the judge studies: perturbation probes and OCR
attribution (grading/studies/models.py), and the error-geometry study (grading/studies/geometry/models.py). The app label stays `grading`, so migrations do not
move; `from grading.models import X` keeps working."""
from grading.judges.models import *  # noqa: F401,F403
from grading.review.models import *  # noqa: F401,F403
from grading.studies.geometry.models import *  # noqa: F401,F403
from grading.studies.models import *  # noqa: F401,F403
