"""Models of the grading app: judge settings, runs and results (judges.py), and the
judge-vs-human review: meta-evaluation and step-judge validation (review.py), and the judge
studies: perturbation probes and OCR attribution (studies.py)."""
from ..studies.geometry.models import *  # noqa: F401,F403,E402  (the geometry study's models, beside its code)
from .judges import *  # noqa: F401,F403
from .review import *  # noqa: F401,F403
from .studies import *  # noqa: F401,F403
