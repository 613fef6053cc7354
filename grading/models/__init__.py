"""Models of the grading app, each beside its sub-package: judge settings, runs and results
(grading/judges/models.py), synthetic answer generation (grading/generation/models.py) and the judge-vs-human review: meta-evaluation and step-judge
validation (grading/review/models.py). The app label stays `grading`, so migrations do not
move; `from grading.models import X` keeps working. The studies' models (studies/models.py,
studies/geometry/models.py) carry the label `grading` too, their tables and migrations stay here,
but they are imported from `studies.models`: grading does not import the studies app."""
from grading.generation.models import *  # noqa: F401,F403
from grading.judges.models import *  # noqa: F401,F403
from grading.review.models import *  # noqa: F401,F403
