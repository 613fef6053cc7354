"""Stored math nested deep enough to crash Chromium's tab is shown as its source, on every page
that renders student text (the shared KaTeX helper in static/js/app.js bounds it)."""
import pytest

from annotation.labelling import services
from annotation.models import Response
from tests.conftest import login, screenshot
from tests.labelling.helpers import full_label, labelled_setup

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DEEP = "x^{" * 200 + "x" + "}" * 200  # 800 bytes; KaTeX's output for it kills the tab
TRANSCRIPT = f"(1) First $a+b=c$, then ${DEEP}$ and (2) $\\frac{{1}}{{2}}$."


def alive(page):
    return page.evaluate("1 + 1") == 2


def assert_deep_math_shown_as_source(page, selector):
    page.wait_for_selector(f"{selector} .katex")
    assert alive(page)
    text = page.inner_text(selector)
    assert "$x^{x^{x^{" in text  # the formula's source, as text
    assert page.locator(f"{selector} .katex").count() == 2  # the two small formulas are rendered
    assert page.evaluate(f"document.querySelector('{selector}').querySelectorAll('.katex .msupsub').length") == 0


@pytest.fixture
def deep_response(annotator, annotator2):
    """A response with the deep formula, labelled 7 and 2 by two annotators (an adjudication case)."""
    question, responses = labelled_setup(1)
    response = responses[0]
    Response.objects.filter(pk=response.pk).update(transcript=TRANSCRIPT)
    services.assign_responses(
        responses=Response.objects.filter(pk=response.pk), annotators=[annotator, annotator2],
        per_response=2, strategy="round_robin",
    )
    return response


def test_deep_math_is_shown_as_source_on_response_label_and_adjudication_pages(
    page, live_server, deep_response, annotator, annotator2, reviewer,
):
    console_errors = []
    page.on("console", lambda message: message.type == "error" and console_errors.append(message.text))
    crashed = []
    page.on("crash", lambda: crashed.append(True))

    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/label/{deep_response.pk}/")
    assert_deep_math_shown_as_source(page, "#transcript")
    screenshot(page, "math_bound_label")

    for user, scores in ((annotator, (3, 4)), (annotator2, (1, 1))):
        services.save_label(response=deep_response, user=user, data=full_label(*scores), base_version=0, submit=True)

    page.context.clear_cookies()
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/responses/{deep_response.pk}/")
    assert_deep_math_shown_as_source(page, "#transcript")
    page.goto(f"{live_server.url}/adjudication/{deep_response.pk}/")
    page.wait_for_selector("#adjudicate-form")
    assert_deep_math_shown_as_source(page, "#transcript")
    screenshot(page, "math_bound_adjudicate")
    assert not crashed and not console_errors, console_errors


def test_nesting_up_to_the_bound_renders_and_past_it_does_not(page, live_server, annotator):
    """Formulas at the bound render without harm to the tab; one level past, or defining macros,
    they are shown as source; the depth count cannot be fooled by comments, \\verb or stray closers."""
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/questions/")
    depth = "window.RealMath.mathDepth"
    cases = {
        "x^2": 1, "x^{2}": 2, "\\frac{a}{b}": 1, "\\{a\\}": 0, "[0,1)": 0,
        "\\left(\\left(x\\right)\\right)": 2, "\\sqrt[\\sqrt[3]{x}]{y}": 2,
        "x^{x^{x}}": 4, "{{{ % }}}}}}\n {{{": 6, "{{{\\verb|}}}}|{{{": 6, "{{\\right\\right{{": 4, "\\sqrt[{]]}]{x}": 2,
    }
    for tex, expected in cases.items():
        assert page.evaluate(f"t => {depth}(t)", tex) == expected, tex

    at_bound = {
        "sup": "x^{" * 16 + "x" + "}" * 16,  # 16 braced superscripts = depth 32
        "frac": "\\frac{1}{" * 32 + "x" + "}" * 32,
        "sqrt": "\\sqrt{" * 32 + "x" + "}" * 32,
    }
    past = {
        "sup": "x^{" * 17 + "x" + "}" * 17,
        "macro": "\\def\\a#1{{{{#1}}}}\\a{\\a{x}}",
        "long": "x+" * 10001 + "x",
    }
    html = "".join(f'<p class="math" id="at-{k}">${v}$</p>' for k, v in at_bound.items())
    html += "".join(f'<p class="math" id="past-{k}">${v}$</p>' for k, v in past.items())
    page.evaluate(
        "html => { const box = document.createElement('div'); box.id = 'probe'; box.innerHTML = html;"
        " document.querySelector('main').appendChild(box); window.RealMath.renderMath(box); }",
        html,
    )
    assert alive(page)
    for key in at_bound:
        assert page.locator(f"#at-{key} .katex").count() == 1, key
    for key, tex in past.items():
        assert page.locator(f"#past-{key} .katex").count() == 0, key
        assert page.inner_text(f"#past-{key}") == f"${tex}$"
