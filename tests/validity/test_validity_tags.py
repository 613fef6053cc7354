"""The Validity page's numbers are rounded, not cut off (Django's number_format cuts a float)."""
from django.utils import translation

from validity.templatetags.validity_tags import num, pct, step_rows


def test_shares_and_figures_are_rounded_and_none_is_a_dash():
    with translation.override("en"):
        assert pct(2 / 3) == "66.7%" and pct(1 / 6) == "16.7%" and pct(0.044444) == "4.4%" and pct(1.0) == "100.0%"
        assert num(0.1366906) == "0.14" and num(0.1366906, 3) == "0.137" and num(-0.1111, 3) == "-0.111"
        assert num(0.99996, 4) == "1.0000" and num(3, 1) == "3.0" and pct(None) == num(None) == "—"


def test_first_wrong_step_rows_all_then_sources_then_questions():
    figures = {"erroneous": 2, "correct": 1, "by_source": {"human": {"erroneous": 2}}, "by_question": {"7": {"correct": 1}}}
    rows = step_rows(figures)
    assert [(r["kind"], r["key"]) for r in rows] == [("all", "all"), ("source", "human"), ("question", "7")]
    assert rows[0]["erroneous"] == 2 and step_rows(None) == []
