"""A reviewer opens a disagreement case from a sorted, filtered list and walks Save-and-next in
the list's order, in a real browser; the step-label quotes of the gold are rendered as math."""
import pytest

from grading.models import MetaEvaluation
from tests.conftest import login, screenshot
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold
from tests.labelling.helpers import assert_quotes_rendered, quoted_gold

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_save_and_next_walks_the_sorted_filtered_list(page, live_server, reviewer):
    kept = make_question("Show that $x^2 \\geq 0$.", location="3-07")
    other = make_question("Find $x$.", location="3-08")
    responses = make_responses(kept, 4) + make_responses(other, 2, start=10)
    set_gold(responses, [5] * 6)
    setting = make_stored_setting("rubric-judge")
    # |Δ| on 3-07: 2, 5, 3, 4 -> largest first: r1, r3, r2, r0; the 3-08 cases (|Δ| 5) are filtered out.
    results = make_results(setting, responses, [7, 0, 8, 1, 10, 0])
    expected = [results[i].pk for i in (1, 3, 2, 0)]

    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/review/disagreements/?setting={setting.pk}")
    page.select_option("select[name=question]", str(kept.pk))
    page.select_option("select[name=order]", "delta")
    page.click("#queue-form button[type=submit]")
    page.wait_for_url(lambda url: "order=delta" in url)
    listed = [int(t.split("#")[1]) for t in page.locator("#queue-table tbody tr td:first-child a").all_inner_texts()]
    assert listed == expected

    page.click(f"#queue-table a:text-is('result #{expected[0]}')")
    walked = []
    for position, pk in enumerate(expected, start=1):
        page.wait_for_selector("#classify-form[data-keys=ready]")
        assert page.inner_text("#case-position") == str(position)
        assert page.inner_text("#case-bar").startswith(f"Case {position} of 4")
        assert f"/disagreements/{pk}/" in page.url
        walked.append(pk)
        if position == 1:
            screenshot(page, "review_case_in_list_order")
        page.keyboard.press("a")
        page.keyboard.press("Control+Enter")
        page.wait_for_selector(f"text=Saved category A for case {pk}")
    assert walked == expected
    assert "order=delta" in page.url and f"question={kept.pk}" in page.url
    assert set(MetaEvaluation.objects.filter(category="A").values_list("result_id", flat=True)) == set(expected)

    # Previous walks back in the same order.
    page.goto(f"{live_server.url}/grading/review/disagreements/{expected[2]}/?setting={setting.pk}&question={kept.pk}&order=delta")
    page.click("#prev-case")
    page.wait_for_url(lambda url: f"/disagreements/{expected[1]}/" in url)
    assert page.inner_text("#case-position") == "2"


def test_gold_step_label_quotes_render_as_math(page, live_server, reviewer, annotator):
    question = make_question("Find $y'$.", location="3-09")
    (response,) = make_responses(question, 1)
    set_gold([response], [5])
    setting = make_stored_setting("rubric-judge")
    (result,) = make_results(setting, [response], [9])
    quoted_gold(response, annotator)
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/review/disagreements/{result.pk}/?setting={setting.pk}")
    page.wait_for_selector("#classify-form[data-keys=ready]")
    assert_quotes_rendered(page, "#gold-panel .step-quote")
    screenshot(page, "review_case_step_quotes")
