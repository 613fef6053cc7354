"""The answer-check page in a real browser: keyboard submit, KaTeX-rendered parsed forms."""
import pytest

from ..conftest import login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_check_answers_with_the_keyboard_and_the_examples(page, live_server, annotator):
    login(page, live_server, annotator.username)
    page.hover(".menu-group[data-group=judges]")
    # Wait for the page's load: its keyboard handler is attached by a deferred script.
    with page.expect_navigation():
        page.click(".menu-group[data-group=judges] >> text=Answer check")
    page.fill("textarea[name=pred]", r"\frac{1}{\sqrt{2}}")
    page.fill("textarea[name=gold]", r"\dfrac{\sqrt{2}}{2}")
    with page.expect_navigation():
        page.press("textarea[name=gold]", "Control+Enter")
    page.wait_for_selector("#eq-result")
    assert page.inner_text("#eq-label") == "Equivalent"
    # Both parsed forms are rendered by KaTeX, not shown as raw LaTeX.
    page.wait_for_selector("#eq-pred-math .katex")
    page.wait_for_selector("#eq-gold-math .katex")
    assert "\\frac" not in page.inner_text("#eq-pred-math")
    screenshot(page, "equivalence_page_equivalent")

    # An example button submits its pair.
    with page.expect_navigation():
        page.click(".eq-example >> nth=4")  # 1/2^98 vs 1/2^99: the tiny-number trap
    assert page.inner_text("#eq-label") == "Not equivalent"
    page.fill("textarea[name=pred]", "<b>no</b> \\ln(x^2)")
    page.fill("textarea[name=gold]", "2\\ln x")
    page.keyboard.press("Alt+s")  # swap
    assert page.input_value("textarea[name=pred]") == "2\\ln x"
    with page.expect_navigation():
        page.press("textarea[name=pred]", "Control+Enter")
    assert page.inner_text("#eq-label") in ("Undecided", "Not equivalent")
    assert page.locator("b", has_text="no").count() == 0  # user text stays text
    screenshot(page, "equivalence_page_undecided")


def test_the_page_names_the_word_that_decided(page, live_server, annotator):
    """A word that changes the meaning and was not compared (递增 / 递减): undecided, and the page says which."""
    login(page, live_server, annotator.username)
    page.goto(live_server.url + "/grading/equivalence/")
    page.fill("textarea[name=pred]", "(0, 1) 内递增")
    page.fill("textarea[name=gold]", "(0, 1) 内递减")
    with page.expect_navigation():
        page.press("textarea[name=gold]", "Control+Enter")
    page.wait_for_selector("#eq-result")
    assert page.inner_text("#eq-label") == "Undecided"
    assert page.inner_text("#eq-decisive-what") == "word 递增 vs 递减"
    screenshot(page, "equivalence_page_decisive_word")
    with page.expect_navigation():
        page.click(".eq-example[data-pred='3.14']")  # 3.14 vs π: an approximation, not an exact answer
    assert page.inner_text("#eq-label") == "Equal up to rounding"
    assert page.is_visible("#eq-approximate")


def test_a_whole_solution_checked_in_the_chinese_interface(page, live_server, annotator):
    """Issues 39 and 41: the explanation, the decisive branch, badges and the text taken as the answer, in Chinese."""
    from accounts.services import set_user_language

    set_user_language(annotator, "zh-hans")
    login(page, live_server, annotator.username)
    page.goto(live_server.url + "/grading/equivalence/")
    solution = "由题意可知 $a_1 = 2$。\n两边同时平方得 $x^2 = 16$。\n所以 $x = 4$ 或 $x = -4$，经检验 $x = -4$ 不符合题意，舍去。"
    page.fill("textarea[name=pred]", solution)
    page.fill("textarea[name=gold]", "x = 4")
    with page.expect_navigation():
        page.press("textarea[name=gold]", "Control+Enter")
    page.wait_for_selector("#eq-result")
    assert page.inner_text("#eq-label") == "等价"
    assert "x = 4 或 x = -4（舍去）" in page.inner_text("#eq-pred-taken")
    assert "舍去" in page.inner_text("#eq-explanation")
    screenshot(page, "equivalence_page_chinese_solution")
    page.fill("textarea[name=pred]", "当 a ≥ 1 时, x > 1")
    page.fill("textarea[name=gold]", "当 a > 1 时, x > 1")
    with page.expect_navigation():
        page.press("textarea[name=gold]", "Control+Enter")
    assert page.inner_text("#eq-label") == "不等价"
    assert page.inner_text("#eq-explanation") == "在 a = 1 处只有第一个答案有值"
    assert page.inner_text("#eq-decisive-what") == "分界点 a = 1"
    assert page.inner_text("#eq-pred-kind") == "分段" and "默认模式" in page.inner_text("#eq-mode")
    screenshot(page, "equivalence_page_chinese_branch")
