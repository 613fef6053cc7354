"""The shared page helpers of static/js/app.js in Chromium: polling backs off after failures
and stops when done or refused, a single-key shortcut ignores keys typed into a field, and
JSON sends carry the CSRF token."""

import json
import time

import pytest

from tests.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


class Script:
    """Answers requests to one URL from a list (a status code or a JSON body) and notes when each came."""

    def __init__(self, page, url, answers):
        self.answers, self.times, self.bodies, self.headers = list(answers), [], [], []
        page.route(url, self.answer)

    def answer(self, route):
        self.times.append(time.monotonic())
        self.bodies.append(route.request.post_data)
        self.headers.append(route.request.headers)
        answer = self.answers.pop(0) if self.answers else 404
        if isinstance(answer, int):
            route.fulfill(status=answer, content_type="text/html", body="<h1>not JSON</h1>")
        else:
            route.fulfill(status=200, content_type="application/json", body=json.dumps(answer))


def test_polling_backs_off_after_failures_and_stops_when_done(page, live_server, annotator):
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/questions/")
    probe = Script(page, "**/poll-probe/", [500, 502, 500, {"n": 1}, {"n": 2, "done": True}, {"n": 3}])
    page.evaluate("""() => {
        window.__seen = [];
        window.RealMath.poll("/poll-probe/", { every: 150, onData: d => { window.__seen.push(d.n); return !!d.done; } });
    }""")
    page.wait_for_function("() => window.__seen.length === 2")
    page.wait_for_timeout(1200)  # long enough for several more polls, had it not stopped

    assert page.evaluate("() => window.__seen") == [1, 2]
    assert len(probe.times) == 5
    gaps = [b - a for a, b in zip(probe.times, probe.times[1:])]
    # A timer never fires early: 300, 600, 1200 ms after the first, second, third failure,
    # then 150 ms after a good answer (a busy machine only adds to each).
    assert all(gap >= 0.95 * nominal for gap, nominal in zip(gaps, [0.3, 0.6, 1.2, 0.15])), gaps
    assert gaps[0] < gaps[1] < gaps[2], gaps
    assert gaps[3] < 0.6, gaps


def test_polling_gives_up_on_a_refusal_and_caps_its_back_off(page, live_server, annotator):
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/questions/")
    gone = Script(page, "**/gone-probe/", [404])
    down = Script(page, "**/down-probe/", [503] * 20)
    page.evaluate("""() => {
        window.__gaveUp = null;
        window.RealMath.poll("/gone-probe/", { every: 50, onData: () => false, onGiveUp: s => { window.__gaveUp = s; } });
        window.__down = window.RealMath.poll("/down-probe/", { every: 50, maxDelay: 150, onData: () => false });
    }""")
    page.wait_for_function("() => window.__gaveUp === 404")
    page.wait_for_timeout(1500)
    page.evaluate("() => window.__down.stop()")
    stopped_at = len(down.times)
    page.wait_for_timeout(400)
    # A try already sent when stop() ran may still reach the route after it (at most one).
    settled = len(down.times)
    page.wait_for_timeout(400)

    assert len(gone.times) == 1
    gaps = [b - a for a, b in zip(down.times, down.times[1:])]
    assert len(down.times) >= 7, gaps  # 100 ms, then 150 ms at most between tries
    assert max(gaps) < 0.4, gaps
    assert settled <= stopped_at + 1 and len(down.times) == settled  # stop() ends it


def test_is_typing_counts_text_fields_not_buttons_or_radios(page, live_server, annotator):
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/questions/")
    verdicts = page.evaluate("""() => {
        const make = html => { const box = document.createElement("div"); box.innerHTML = html; document.body.append(box); return box.firstChild; };
        const cases = {
            text: "<input type=text>", number: "<input type=number>", search: "<input type=search>", plain: "<input>",
            textarea: "<textarea></textarea>", select: "<select><option>a</option></select>",
            editable: "<div contenteditable=true>x</div>",
            radio: "<input type=radio>", checkbox: "<input type=checkbox>", submit: "<input type=submit>",
            button: "<button>b</button>", link: "<a href=#>a</a>", div: "<div>d</div>",
        };
        const out = {};
        for (const [name, html] of Object.entries(cases)) out[name] = window.RealMath.isTyping(make(html));
        out.nothing = window.RealMath.isTyping(null);
        return out;
    }""")
    typing = {name for name, yes in verdicts.items() if yes}
    assert typing == {"text", "number", "search", "plain", "textarea", "select", "editable"}, verdicts


def test_a_shortcut_key_is_ignored_while_typing_in_a_field(page, live_server, reviewer):
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/judges/")
    page.wait_for_selector("#config-table")
    page.evaluate("""() => {
        const field = document.createElement("input");
        field.id = "probe-field";
        const box = document.createElement("input");
        box.type = "checkbox";
        box.id = "probe-box";
        document.querySelector("main").prepend(field, box);
    }""")
    page.focus("#probe-field")
    page.keyboard.press("r")  # the judges page's key for the runs list
    page.wait_for_timeout(300)
    assert page.url.endswith("/grading/judges/")
    assert page.input_value("#probe-field") == "r"

    page.focus("#probe-box")
    page.keyboard.press("r")
    page.wait_for_url("**/grading/judges/runs/")


def test_send_json_carries_the_csrf_token_and_reads_any_answer(page, live_server, annotator):
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/questions/")
    probe = Script(page, "**/send-probe/", [{"saved": 3}, 409])
    answers = page.evaluate("""async () => [
        await window.RealMath.sendJson("/send-probe/", "PUT", { a: 1 }),
        await window.RealMath.sendJson("/send-probe/", "POST", { b: 2 }),
    ]""")
    token = page.evaluate("() => window.RealMath.csrfToken()")

    assert answers == [{"ok": True, "status": 200, "data": {"saved": 3}}, {"ok": False, "status": 409, "data": {}}]
    assert token and all(h["x-csrftoken"] == token for h in probe.headers)
    assert all(h["content-type"] == "application/json" for h in probe.headers)
    assert [json.loads(b) for b in probe.bodies] == [{"a": 1}, {"b": 2}]


CSP_LISTENER = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => { window.__csp.push(e.violatedDirective + " " + e.sourceFile); });
"""


def test_progress_bars_take_their_width_from_data_percent_under_the_csp(page, live_server, annotator):
    """The CSP has no 'unsafe-inline' for styles: a bar's width comes from data-percent, set
    by app.js through CSSOM when the page loads (and by RealMath.setBar later)."""
    from decimal import Decimal

    from django.utils import timezone

    from annotation.models import Assignment, Label
    from tests.factories import make_question, make_responses

    responses = make_responses(make_question(), 4)
    for response in responses:
        Assignment.objects.create(response=response, annotator=annotator)
    Label.objects.create(response=responses[0], annotator=annotator, total=Decimal(5), submitted=True)
    Assignment.objects.filter(response=responses[0]).update(completed_at=timezone.now())
    page.add_init_script(CSP_LISTENER)
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/label/")
    width = "b => b.getBoundingClientRect().width / b.parentElement.getBoundingClientRect().width"
    assert page.eval_on_selector(".progress > [data-percent]", "b => b.getAttribute('data-percent')") == "25"
    page.wait_for_function(f"() => Math.abs(({width})(document.querySelector('.progress > span')) - 0.25) < 0.01")
    page.evaluate("() => window.RealMath.setBar(document.querySelector('.progress > span'), 140)")
    assert page.eval_on_selector(".progress > span", "b => b.style.width") == "100%"  # clamped
    assert page.evaluate("() => window.__csp") == []


def test_katex_renders_under_a_csp_without_inline_styles(page, live_server, annotator):
    """KaTeX's DOM output styles its boxes through CSSOM, which the CSP allows; the spots of KaTeX
    that write a style attribute (a parse error's red box, \\pmb and \\fcolorbox in MathML) are
    avoided: a formula that does not parse is shown as its source, the two commands are macros."""
    page.add_init_script(CSP_LISTENER)
    warnings = []
    page.on("console", lambda m: m.type in ("warning", "error") and warnings.append((m.type, m.text)))
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/questions/")
    page.evaluate(r"""() => {
        const box = document.createElement("div");
        box.id = "math-probe";
        box.className = "math";
        box.textContent = "A $\\frac{a}{b}$ B $\\fcolorbox{red}{yellow}{x}$ C $\\pmb{y}$ D $\\boxed{z}$ E $x^$ F";
        document.body.appendChild(box);
        window.RealMath.renderMath(document);
    }""")
    page.wait_for_selector("#math-probe .katex")
    assert page.locator("#math-probe .katex").count() == 4, (warnings, page.inner_text("#math-probe"))
    assert "$x^$" in page.inner_text("#math-probe")  # not parsed: shown as written
    # The fraction's boxes were sized through CSSOM (a blocked style would leave them unsized).
    assert page.eval_on_selector("#math-probe .katex .strut", "s => s.style.height") != ""
    assert page.evaluate("() => window.__csp") == []
    assert [t for t, _ in warnings] == ["warning"], warnings  # the unparsed formula, as a warning


def test_a_wide_table_scrolls_in_its_card_with_a_cue(page, live_server, annotator):
    """Issue 39: a table wider than its card (the per-question metrics at common widths) lost its
    last columns from sight with nothing saying so; now its card scrolls, its right edge fades
    while columns are hidden there, and the fade goes once they are scrolled into view."""
    login(page, live_server, annotator.username)
    page.set_viewport_size({"width": 800, "height": 700})
    page.goto(f"{live_server.url}/questions/")
    page.evaluate("""() => {
        const wrap = document.createElement('div');
        wrap.className = 'table-wrap'; wrap.id = 'wide-probe';
        const cells = Array.from({length: 24}, (_, i) => '<td>column ' + i + ' 0.123 [0.100, 0.200]</td>').join('');
        wrap.innerHTML = '<table class="grid"><tbody><tr>' + cells + '</tr></tbody></table>';
        document.querySelector('main').appendChild(wrap);
        window.RealMath.markWideTables(document);
    }""")
    wrap = page.locator("#wide-probe")
    assert "scrolls" in wrap.get_attribute("class") and "at-end" not in wrap.get_attribute("class")
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")  # the page does not widen
    mask = page.evaluate("() => { const s = getComputedStyle(document.getElementById('wide-probe'));"
                         " return s.webkitMaskImage || s.maskImage; }")
    assert mask and mask != "none"  # the cue
    assert wrap.get_attribute("tabindex") == "0"  # scrolls by keyboard too
    page.evaluate("() => { const w = document.getElementById('wide-probe'); w.scrollLeft = w.scrollWidth; }")
    page.wait_for_function("() => document.getElementById('wide-probe').classList.contains('at-end')")
    last = page.locator("#wide-probe td").last.bounding_box()
    box = wrap.bounding_box()
    assert last["x"] + last["width"] <= box["x"] + box["width"] + 1  # the last column can be reached
