"""Issue 36: `methods_report --seed` is the seed of every resampled interval of the report (the
judges' MSE, FR and correlation intervals, by source, the paired comparison, expert agreement),
where before the judges' intervals were always drawn with seed 0 whatever the report said."""
import numpy as np
import pytest

from annotation.models import Label
from grading.report import selectors as report
from tests.conftest import make_user
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db


@pytest.fixture
def eight_questions(db):
    rng = np.random.default_rng(4)
    answers = []
    for q in range(8):
        question = make_question(f"Problem {q}: show $x^{q} \\geq 0$.", location=f"3-{q:02d}")
        answers += make_responses(question, 6, start=10 * q)
    golds = rng.integers(2, 9, len(answers)).tolist()
    set_gold(answers, golds)
    first, second = make_stored_setting("judge-a"), make_stored_setting("judge-b")
    make_results(first, answers, [g + int(rng.integers(-3, 4)) for g in golds])
    make_results(second, answers, [g + int(rng.integers(-1, 2)) for g in golds])
    experts = [make_user("expert-a", "annotator"), make_user("expert-b", "annotator")]
    for i, (response, gold) in enumerate(zip(answers, golds)):
        for expert, delta in zip(experts, (0, i % 3)):
            Label.objects.create(response=response, annotator=expert, total=max(gold - delta, 0), submitted=True)
    return first, second


def _intervals(data):
    """Every resampled interval of the appendix, by where it is."""
    out = {}
    for judge in data["judges"]:
        wilson = judge["overall"]["uncertainty"]["wilson"]  # a share of 0 or 1: Wilson, nothing drawn
        for key in ("mse_ci", "fr_1_ci", "fr_2_ci", "pearson_ci", "spearman_ci"):
            if key.removesuffix("_ci") not in wilson:
                out[(judge["name"], key)] = judge["overall"][key]
        for row in judge["by_source"]:
            out[(judge["name"], row["source"], "mse_ci")] = row["mse_ci"]
    for pair in data["comparison"]["pairs"]:
        for measure, figures in pair["measures"].items():
            out[("comparison", measure)] = figures["ci"]
    for name in ("exact", "within_one", "mad"):
        out[("agreement", name)] = data["agreement"][f"{name}_ci"]
    return out


def test_the_seed_changes_every_resampled_interval(eight_questions):
    one = report.report_data(bootstrap=300, seed=1)
    others = [_intervals(report.report_data(bootstrap=300, seed=seed)) for seed in (2, 3)]
    first = _intervals(one)
    assert all(other.keys() == first.keys() for other in others) and len(first) >= 19
    for where, bounds in first.items():
        assert bounds[0] is not None and bounds[1] is not None, where  # eight questions: estimable
        # a share's percentile can land on the same multiple of 1/48 twice; not for three seeds
        assert any(other[where] != bounds for other in others), where
    assert report.report_data(bootstrap=300, seed=1)["judges"] == one["judges"]  # and the same seed, the same
    assert one["judges"][0]["overall"]["uncertainty"]["seed"] == 1
