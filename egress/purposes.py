"""What a provider call is for: the purposes the app labels its calls with (`llm.labelled`).

The codes are data (stored on each ProviderCall, in the JSON export, never translated); the
labels are for people.
"""
from django.utils.translation import gettext_lazy

JUDGE = "judge"
GENERATION = "generation"
META_EVAL = "meta-eval"
VISION_OCR = "vision-ocr"
EMBEDDINGS = "embeddings"
SURPRISAL = "surprisal"
STEP_SPLIT = "step-split"
PROBE = "probe"
STYLE_REWRITE = "style-rewrite"
CONNECTION_CHECK = "connection-check"
BATCH = "batch"
UNLABELLED = ""

CHOICES = [
    (JUDGE, gettext_lazy("Judge")),
    (GENERATION, gettext_lazy("Synthetic answers (generation)")),
    (META_EVAL, gettext_lazy("Meta-evaluation")),
    (VISION_OCR, gettext_lazy("Vision OCR")),
    (EMBEDDINGS, gettext_lazy("Embeddings (error geometry)")),
    (SURPRISAL, gettext_lazy("Step surprisal")),
    (STEP_SPLIT, gettext_lazy("Step splitting")),
    (PROBE, gettext_lazy("Perturbation probe")),
    (STYLE_REWRITE, gettext_lazy("Style rewrite")),
    (CONNECTION_CHECK, gettext_lazy("Connection check")),
    (BATCH, gettext_lazy("Batch API")),
    (UNLABELLED, gettext_lazy("Unlabelled")),
]
