"""Inter-annotator agreement on total scores.

Measures, each for a set of responses labelled by two or more raters (an imported gold label
counts as the rater "imported"):

- exact agreement, agreement within one point, mean absolute difference: over every pair of
  labels given to the same response;
- quadratic-weighted Cohen's kappa (scikit-learn's formula, in numpy). Scores are put on a
  grid of their finest step (1, 0.5, ...) from 0 to the full score, so the weights follow score distances and not
  the ranks of the values that happen to occur. For more than two raters: the mean of the
  pairwise kappas (Light's kappa);
- Krippendorff's alpha, interval level (the `krippendorff` package), missing labels allowed;
- ICC, written here from the ANOVA formulas: ICC(2,1) (two-way random effects, absolute
  agreement, single rater; Shrout & Fleiss 1979) for an annotator pair, whose responses are all
  labelled by both; ICC(1,1) (one-way random effects, single rater) for a question or overall,
  where different responses have different raters, with the unbalanced-design k0 of
  Donner (1986) when responses have different numbers of labels.

A measure that is undefined on the data (too few items, no variance; Krippendorff's alpha below two
pairable units) is None. The ICC estimators are ratios of mean squares, not correlations: under
systematic disagreement they fall below 0 and can leave [-1, 1] (ICC(2,1) = -2 for four answers
scored (0, 3), (3, 0), (1, 2), (2, 1)); they are reported as computed, and the agreement page says so.
"""
import math
import warnings
from collections import defaultdict
from dataclasses import asdict, dataclass
from decimal import Decimal
from itertools import combinations

import krippendorff
import numpy as np
from django.utils.translation import gettext_lazy

GRID_STEPS = (Decimal(1), Decimal("0.5"), Decimal("0.25"), Decimal("0.1"), Decimal("0.05"), Decimal("0.01"))


def _dec(value):
    return value if isinstance(value, Decimal) else Decimal(str(value))


def score_step(scores):
    """The coarsest step of GRID_STEPS that every score is a multiple of."""
    scores = {_dec(s) for s in scores}
    for step in GRID_STEPS:
        if all(s % step == 0 for s in scores):
            return step
    return GRID_STEPS[-1]


def _finite(value):
    return None if value is None or not math.isfinite(value) else float(value)


def pair_differences(pairs):
    """(exact, within one point, mean absolute difference) over (a, b) score pairs."""
    if not pairs:
        return None, None, None
    diffs = [abs(_dec(a) - _dec(b)) for a, b in pairs]
    n = len(diffs)
    return (
        sum(d == 0 for d in diffs) / n,
        sum(d <= 1 for d in diffs) / n,
        float(sum(diffs) / n),
    )


def weighted_kappa(a, b, *, max_score, step=None):
    """Quadratic-weighted Cohen's kappa of two raters' scores on the grid 0..max_score."""
    if len(a) < 2:
        return None
    step = step or score_step(list(a) + list(b))
    top = max(_dec(max_score), *(_dec(x) for x in list(a) + list(b)))
    levels = list(range(int(top / step) + 1))
    to_level = lambda xs: [int(_dec(x) / step) for x in xs]  # noqa: E731
    return _finite(quadratic_kappa(to_level(a), to_level(b), len(levels)))


def quadratic_kappa(a, b, n_levels):
    """Cohen's kappa with quadratic weights of two raters' levels 0..n_levels-1.

    The formula of scikit-learn's ``cohen_kappa_score(labels=range(n_levels),
    weights="quadratic")`` (checked against it in the tests), in numpy: importing scikit-learn
    cost every web process seconds on its first agreement page. NaN when undefined."""
    confusion = np.zeros((n_levels, n_levels))
    np.add.at(confusion, (np.asarray(a, dtype=int), np.asarray(b, dtype=int)), 1)
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / confusion.sum()
    grid = np.arange(n_levels)
    weights = (grid[:, None] - grid[None, :]) ** 2
    disagreement = (weights * expected).sum()
    return 1 - (weights * confusion).sum() / disagreement if disagreement else math.nan


def krippendorff_interval(units):
    """Krippendorff's alpha (interval) of units given as {rater: score} dicts."""
    raters = sorted({r for unit in units for r in unit})
    pairable = [u for u in units if len(u) >= 2]
    if len(raters) < 2 or len(pairable) < 2:
        return None  # one pairable unit: alpha is 0 by its formula, not a measurement ("—")
    data = np.full((len(raters), len(pairable)), np.nan)
    index = {r: i for i, r in enumerate(raters)}
    for column, unit in enumerate(pairable):
        for rater, score in unit.items():
            data[index[rater], column] = float(score)
    if np.nanmax(data) == np.nanmin(data):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return _finite(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
    except (ValueError, ZeroDivisionError):
        return None


def icc_2_1(rows):
    """ICC(2,1) of a complete table: one row per response, one column per rater."""
    x = np.asarray(rows, dtype=float)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        return None
    n, k = x.shape
    grand = x.mean()
    ss_rows = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_error = ((x - grand) ** 2).sum() - ss_rows - ss_cols
    ms_rows = ss_rows / (n - 1)
    ms_cols = ss_cols / (k - 1)
    ms_error = ss_error / ((n - 1) * (k - 1))
    denominator = ms_rows + (k - 1) * ms_error + k * (ms_cols - ms_error) / n
    return None if denominator == 0 else _finite((ms_rows - ms_error) / denominator)


def icc_1_1(groups):
    """ICC(1,1) of responses with any number (>= 2) of labels each: one list of scores per response."""
    groups = [[float(s) for s in g] for g in groups if len(g) >= 2]
    n = len(groups)
    if n < 2:
        return None
    sizes = np.array([len(g) for g in groups], dtype=float)
    total = sizes.sum()
    grand = sum(sum(g) for g in groups) / total
    means = np.array([sum(g) / len(g) for g in groups])
    ss_between = (sizes * (means - grand) ** 2).sum()
    ss_within = sum(((np.array(g) - m) ** 2).sum() for g, m in zip(groups, means))
    ms_between = ss_between / (n - 1)
    ms_within = ss_within / (total - n)
    k0 = (total - (sizes**2).sum() / total) / (n - 1)
    denominator = ms_between + (k0 - 1) * ms_within
    return None if denominator == 0 else _finite((ms_between - ms_within) / denominator)


@dataclass
class GroupAgreement:
    """Agreement of everyone on a set of responses."""

    responses: int  # responses with two labels or more
    label_pairs: int
    exact: float | None
    within_one: float | None
    mad: float | None
    kappa: float | None  # mean pairwise quadratic-weighted kappa
    alpha: float | None
    icc: float | None  # ICC(1,1)


@dataclass
class PairAgreement:
    a: str
    b: str
    n: int
    exact: float | None
    within_one: float | None
    mad: float | None
    kappa: float | None
    alpha: float | None
    icc: float | None  # ICC(2,1)


def _units(ratings):
    """{response: {rater: score}} from (response, question, rater, score) rows."""
    units = defaultdict(dict)
    for response, _question, rater, score in ratings:
        units[response][rater] = score
    return units


def _by_rater(units):
    """{rater: {response: score}}: a pair is then found by walking the smaller rater's labels."""
    by_rater = defaultdict(dict)
    for unit, labels in units.items():
        for rater, score in labels.items():
            by_rater[rater][unit] = score
    return by_rater


def pair_agreement(units, a, b, max_score, by_rater=None):
    by_rater = by_rater if by_rater is not None else _by_rater(units)
    first, second = by_rater.get(a, {}), by_rater.get(b, {})
    small, large = (first, second) if len(first) <= len(second) else (second, first)
    shared_units = sorted((u for u in small if u in large), key=str)
    shared = [(first[u], second[u]) for u in shared_units]
    exact, within, mad = pair_differences(shared)
    xs, ys = [p[0] for p in shared], [p[1] for p in shared]
    return PairAgreement(
        a=a, b=b, n=len(shared), exact=exact, within_one=within, mad=mad,
        kappa=weighted_kappa(xs, ys, max_score=max_score) if shared else None,
        alpha=krippendorff_interval([{a: x, b: y} for x, y in shared]),
        icc=icc_2_1(shared) if shared else None,
    )


def group_agreement(units, max_score, pair_kappas=None):
    """Agreement of everyone on `units`; `pair_kappas` saves recomputing the pairwise kappas."""
    multi = [u for u in units.values() if len(u) >= 2]
    pairs = [(u[r], u[s]) for u in multi for r, s in combinations(sorted(u), 2)]
    exact, within, mad = pair_differences(pairs)
    if pair_kappas is None:
        by_rater = _by_rater(units)
        raters = sorted({r for u in multi for r in u})
        pair_kappas = [pair_agreement(units, r, s, max_score, by_rater).kappa for r, s in combinations(raters, 2)]
    kappas = [k for k in pair_kappas if k is not None]
    return GroupAgreement(
        responses=len(multi), label_pairs=len(pairs), exact=exact, within_one=within, mad=mad,
        kappa=sum(kappas) / len(kappas) if kappas else None,
        alpha=krippendorff_interval(multi),
        icc=icc_1_1([list(u.values()) for u in multi]),
    )


MATRIX_METRICS = {
    "kappa": gettext_lazy("Quadratic-weighted kappa"),
    "exact": gettext_lazy("Exact agreement"),
    "within_one": gettext_lazy("Within ±1 point"),
    "mad": gettext_lazy("Mean absolute difference"),
    "alpha": gettext_lazy("Krippendorff's alpha"),
    "icc": gettext_lazy("ICC(2,1)"),
    "n": gettext_lazy("Responses labelled by both"),
}


def agreement_report(ratings, full_scores, question_names=None):
    """Overall, per question and per annotator pair agreement, and the rater × rater matrix.

    `ratings`: (response id, question id, rater, score) rows; `full_scores`: {question id: full
    score}; `question_names`: {question id: display name}.
    """
    ratings = list(ratings)
    question_names = question_names or {}
    top = max(full_scores.values(), default=Decimal(0))
    units = _units(ratings)
    by_question = defaultdict(list)
    for row in ratings:
        by_question[row[1]].append(row)
    every_question = [
        {"question": q, "name": question_names.get(q, str(q)), **asdict(group_agreement(_units(rows), full_scores.get(q, top)))}
        for q, rows in sorted(by_question.items(), key=lambda item: question_names.get(item[0], str(item[0])))
    ]
    # A question none of whose answers has two labels yet has nothing to compare: counted, not listed.
    questions = [q for q in every_question if q["responses"]]
    raters = sorted({row[2] for row in ratings})
    by_rater = _by_rater(units)
    pairs = [pair_agreement(units, a, b, top, by_rater) for a, b in combinations(raters, 2)]
    pairs = [p for p in pairs if p.n]
    lookup = {(p.a, p.b): p for p in pairs} | {(p.b, p.a): p for p in pairs}
    matrix = {
        metric: [[getattr(lookup[(a, b)], metric) if (a, b) in lookup else None for b in raters] for a in raters]
        for metric in MATRIX_METRICS
    }
    return {
        "raters": raters,
        "overall": asdict(group_agreement(units, top, pair_kappas=[p.kappa for p in pairs])),
        "questions": questions,
        "questions_without_pairs": len(every_question) - len(questions),
        "pairs": [asdict(p) for p in pairs],
        "matrix": matrix,
    }
