"""Issue 36 on the review side: a comparison of one question has no interval; the evaluation-gap
ratio is unbounded when the synthetic MSE can be 0; permutation p-values are never 0; |bias| is
the error measure and signed bias only says the direction; F1 is 0 where the judge finds none of
the experts' flaws; two records for one answer refuse a judge-result import. Each of these failed
on the code before it."""
import numpy as np
import pytest

from core import paired
from grading.judges.result_import import ImportRefused, import_judge_results
from grading.models import JudgeResult
from grading.review import metrics
from grading.review.selectors.validation import confusion_figures


def test_a_comparison_of_one_question_has_no_interval_and_a_permutation_p_of_one():
    # B is exact, A off by 1-2 on all 16 answers of ONE question: the old two-stage bootstrap
    # printed an interval excluding 0 beside a permutation p of 1.0
    gold = np.full(16, 5.0)
    a = gold + np.tile([1.0, 2.0], 8)
    b = gold.copy()
    out = paired.paired_comparison(a, b, gold, np.zeros(16), n_resamples=500, seed=0)
    assert out["measures"]["mae"]["difference"] == pytest.approx(-1.5)
    assert out["measures"]["mae"]["ci"] == [None, None]
    assert out["interval_note"] == "not estimable: 1 question"
    assert out["permutation"]["p_value"] == 1.0  # both sign patterns of one question are as extreme


def test_the_gap_ratio_is_unbounded_when_a_resample_can_have_synthetic_mse_0():
    rng = np.random.default_rng(1)
    questions = np.repeat(np.arange(14), 10)
    gold = rng.integers(1, 9, 140).astype(float)
    human = gold + rng.choice([-2.0, -1.0, 0.0, 1.0, 2.0], 140)
    synthetic = gold.copy()
    synthetic[questions < 2] += 1.0  # synthetic answers err on 2 questions of 14 only
    gap = metrics.evaluation_gap(human, gold, synthetic, gold, human_clusters=questions, synthetic_clusters=questions,
                                 n_resamples=2000, seed=3)
    # (12/14)^14 = 11.5% of resamples draw neither question: synthetic MSE 0, ratio +inf, kept
    assert gap.mse_ratio > 1 and gap.mse_ratio_ci[0] > 0
    assert gap.mse_ratio_ci[1] is None and gap.uncertainty["ratio_unbounded"] is True
    assert gap.as_dict()["mse_ratio_ci"] == [gap.mse_ratio_ci[0], None]


def test_a_permutation_p_is_never_0_and_comes_with_its_resolution():
    clusters = np.repeat(np.arange(30), 4)
    gold = np.full(120, 5.0)
    a, b = gold + 3, gold.copy()  # B better on every answer of every question
    p, method = paired.cluster_permutation_test(a, b, gold, clusters, n_permutations=10_000, seed=0)
    assert method.startswith("10000 seeded random") and p == 1 / 10_001
    out = paired.paired_comparison(a, b, gold, clusters, n_resamples=200)
    assert out["permutation"]["resolution"] == pytest.approx(1 / 10_001)
    p_exact, _ = paired.cluster_permutation_test(a[:40], b[:40], gold[:40], clusters[:40])  # 10 questions: exact
    assert p_exact == 2 / 2**10


def test_abs_bias_is_the_error_measure_and_the_sign_test_names_its_assumption():
    gold = np.full(50, 5.0)
    clusters = np.repeat(np.arange(10), 5)
    a = gold + np.tile([0.0, 0.0, 0.0, 0.0, -0.1], 10)  # bias -0.02
    b = gold + np.tile([0.0, 0.0, 0.0, -0.2, -0.2], 10)  # bias -0.08: further from 0
    m = paired.paired_comparison(a, b, gold, clusters, n_resamples=200)["measures"]
    assert m["bias"]["difference"] == pytest.approx(-0.06)  # "B is closer" by the old reading
    assert m["abs_bias"]["difference"] == pytest.approx(0.06)  # |bias| got worse
    assert "independent" in paired.sign_test(a, b, gold).as_dict()["assumption"]


def test_f1_is_0_when_the_judge_finds_none_of_the_experts_flaws():
    from sklearn.metrics import f1_score

    pairs = [(True, False)] * 3 + [(True, True)] * 4  # judge passes all; experts flag 3: TP 0, FP 0, FN 3
    figures = confusion_figures(pairs)
    assert (figures["tp"], figures["fp"], figures["fn"]) == (0, 0, 3)
    assert figures["precision"] is None and figures["recall"] == 0.0 and figures["f1"] == 0.0
    expert = [not e for _, e in pairs]
    judge = [not j for j, _ in pairs]
    assert figures["f1"] == f1_score(expert, judge, zero_division=0.0)
    mixed = [(False, False), (False, True), (True, False), (False, False), (True, True)]
    assert confusion_figures(mixed)["f1"] == pytest.approx(
        f1_score([not e for _, e in mixed], [not j for j, _ in mixed]))
    assert confusion_figures([(True, True)] * 3)["f1"] is None  # no flaw on either side: undefined


@pytest.mark.django_db
def test_two_records_for_one_answer_refuse_the_import(sample_data):
    from annotation.models import Response

    response = Response.objects.order_by("id").first()
    body = f'[{{"response_id": {response.pk}, "model_score": 3}}, {{"response_id": {response.pk}, "model_score": 7}}]'
    with pytest.raises(ImportRefused, match=r"Records 0 and 1 are both results for response #\d+"):
        import_judge_results(body, "results.json")
    assert not JudgeResult.objects.exists()  # nothing kept, not the later one silently
    other = Response.objects.order_by("id")[1]
    fine = f'[{{"response_id": {response.pk}, "model_score": 3}}, {{"response_id": {other.pk}, "model_score": 7}}]'
    assert import_judge_results(fine, "results.json").created == 2


@pytest.mark.django_db
def test_metrics_command_and_page_say_why_one_question_has_no_interval(reviewer_client):
    import io

    from django.core.management import call_command
    from django.urls import reverse

    from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

    question = make_question()
    answers = make_responses(question, 8)
    set_gold(answers, [5] * 8)
    setting = make_stored_setting("one-question")
    make_results(setting, answers, [5, 6, 7, 5, 3, 5, 8, 5])
    out = io.StringIO()
    call_command("metrics", "--setting", "one-question", "--format", "text", "--bootstrap", "100", stdout=out)
    assert "MSE 2.250 not estimable: 1 question" in out.getvalue()
    page = reviewer_client.get(reverse("grading:review_metrics") + f"?setting={setting.pk}").content.decode()
    assert "not estimable: 1 question" in page
    assert "[0.0%, 32.4%]" in page  # FR_4: 0 of 8, a Wilson interval whose upper bound is not 0
