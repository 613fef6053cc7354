"""The result of one equivalence check."""
from dataclasses import asdict, dataclass

APPROXIMATE_LABEL = "equal up to rounding"  # data (exports, JSON), not translated here


@dataclass(frozen=True)
class Verdict:
    """Whether two answers are equivalent, and why.

    ``equivalent`` is True, False, or None (undecided: the engine could not establish either
    and does not guess). ``method`` names what decided (``symbolic``, ``numeric-points``,
    ``decimal-rounding``, ``set``, ``timeout``...), ``explanation`` says it in one line.
    ``pred_parsed``/``gold_parsed`` are the parsed forms as plain text, ``*_latex`` the same as
    LaTeX for display, ``*_kind`` the kind of answer (number, expression, equation, set...).
    ``second_opinion`` is Math-Verify's verdict when it was asked (``equivalent``, ``explanation``,
    ``elapsed_ms``...); it is shown beside ours and never changes ours.

    ``approximate`` is True when ``equivalent`` is True only because a written decimal is the
    exact value rounded at its last written place (default mode: ``3.14`` vs ``\\pi``): a verdict
    of its own, "equal up to rounding", which the CAS judge scores as its setting says.
    ``decisive`` names what decided, for a person: a branch (``branch x < 0``), a label
    (``label 最大值``), a word (``word 递增``), or "" when nothing in particular did.
    """

    equivalent: object
    method: str
    explanation: str
    pred_parsed: str = ""
    gold_parsed: str = ""
    pred_latex: str = ""
    gold_latex: str = ""
    pred_kind: str = ""
    gold_kind: str = ""
    mode: str = "default"
    elapsed_ms: float = 0.0
    second_opinion: object = None  # Math-Verify's verdict (a dict) when asked for; never changes ours
    approximate: bool = False  # equal only up to rounding at the written place (see above)
    decisive: str = ""  # the branch, label or word that decided ("" if none in particular)
    pred_answer: str = ""  # the text taken as the predicted answer (from a whole solution: what was extracted)
    gold_answer: str = ""
    pred_source: str = ""  # where it came from: as-given, boxed, answer-is, conclusion, last-formula, last-line, none
    gold_source: str = ""
    explanation_data: object = None  # the explanation as a message: {"t": English template, "p": {name: value}} (see messages.py)
    decisive_data: object = None  # the same for decisive

    @property
    def decided(self):
        return self.equivalent is not None

    @property
    def label(self):
        """"equivalent", "equal up to rounding", "not equivalent" or "undecided"."""
        if self.equivalent is None:
            return "undecided"
        if self.equivalent and self.approximate:
            return APPROXIMATE_LABEL
        return "equivalent" if self.equivalent else "not equivalent"

    @property
    def agreement(self):
        """How Math-Verify's verdict relates to ours: "agree", "disagree", "ours-only", "theirs-only",
        "neither" (both undecided), or "" when it was not asked."""
        from .second_opinion import agreement  # kept out of the web process: Math-Verify runs in the worker only

        return agreement(self.equivalent, self.second_opinion)

    def as_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data, mode="default"):
        fields = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        fields.setdefault("mode", mode)
        return cls(**fields)

    @classmethod
    def undecided(cls, method, explanation, mode="default", elapsed_ms=0.0):
        from .messages import as_data  # plain data beside the English text

        return cls(equivalent=None, method=method, explanation=str(explanation), mode=mode, elapsed_ms=elapsed_ms,
                   explanation_data=as_data(explanation))
