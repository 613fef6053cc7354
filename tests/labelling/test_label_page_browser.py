"""The labelling screen in a real browser: keyboard-only labelling, step spans, drafts that
survive leaving the page, and a conflict shown side by side."""
import pytest

from annotation.labelling import services
from annotation.models import Label, LabelDraft, Response

from ..conftest import login, screenshot
from .helpers import full_label, labelled_setup, select_text

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def assign(user, n=2, **kwargs):
    question, responses = labelled_setup(n, **kwargs)
    Response.objects.filter(pk=responses[0].pk).update(
        transcript="(1) Since $a=1$, we get $b=2$ and so $c=3$.\n(2) $f'(x)=2x$, so the minimum is $0$."
    )
    services.assign_responses(
        responses=Response.objects.filter(question=question), annotators=[user], per_response=1, strategy="round_robin"
    )
    return question, responses


def test_label_a_response_with_the_keyboard_alone(page, live_server, annotator):
    _, (response, *_) = assign(annotator)
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/label/")
    page.keyboard.press("n")  # next unlabelled response
    page.wait_for_url(f"**/label/{response.pk}/")
    page.wait_for_selector("#group-0.focused")
    page.wait_for_selector("#transcript .katex")

    page.keyboard.press("l")  # second checkpoint of (1): 3 points cumulative
    page.keyboard.press("r")  # reached, with the one before: proposes 3
    assert page.input_value("#group-0 input.points") == "3"
    page.keyboard.press("j")  # to (2)
    page.keyboard.press("r")  # first checkpoint of (2) reached: proposes 5 - 3 = 2
    assert page.input_value("#group-1 input.points") == "2"
    page.keyboard.press("3")  # the expert gives 3 instead: an override
    assert page.input_value("#group-1 input.points") == "3"
    assert page.inner_text("#total") == "6"
    page.wait_for_selector("#group-1 .override:not([hidden])")
    # Said in words as soon as the points leave the rubric's range, before any submit.
    assert page.inner_text("#group-1 .proposal") == "the marks give exactly 2 points"
    assert page.inner_text("#group-1 .override").startswith("3 points is outside what the marks give")
    assert page.is_visible("#override-needed")
    page.keyboard.press("Control+Enter")  # refused in the page: a reason is needed
    page.wait_for_selector("#override_reason.needed")
    assert page.evaluate("document.activeElement.id") == "override_reason"
    page.keyboard.type("Found the minimum by another valid method.")
    page.keyboard.press("Escape")
    screenshot(page, "label_page_keyboard")
    page.keyboard.press("Control+Enter")
    page.wait_for_url("**?submitted=1")
    page.wait_for_selector("#submitted-note")

    response.refresh_from_db()
    assert (response.gold_score, response.gold_status) == (6, "single")
    label = Label.objects.get(response=response, annotator=annotator)
    assert label.submitted and label.sub_scores == {"(1)": 3, "(2)": 3}
    assert sorted(label.checkpoint_marks.values()) == ["reached", "reached", "reached"]
    assert label.override_reason.startswith("Found the minimum")
    page.keyboard.press("]")  # on to the next assigned response
    page.wait_for_url(lambda url: f"/label/{response.pk}/" not in url and "/label/" in url)


def test_step_label_on_a_selected_passage_and_the_draft_survives_leaving(page, live_server, annotator):
    _, (response, *_) = assign(annotator)
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/label/{response.pk}/")
    page.wait_for_selector("#transcript .katex")
    # Select "we get" ... up to the math after it: the selection ends inside KaTeX output, so it
    # snaps to the end of "$b=2$".
    page.evaluate(
        """() => {
            const segs = [...document.querySelectorAll('#transcript .seg')];
            const plain = segs.find(s => s.textContent.includes('we get'));
            const math = plain.nextElementSibling;
            const text = plain.firstChild;
            const range = document.createRange();
            range.setStart(text, text.data.indexOf('we get'));
            range.setEnd(math.querySelector('.katex'), 1);
            const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
        }"""
    )
    page.keyboard.press("e")
    page.wait_for_selector("#step-form:not([hidden])")
    page.keyboard.press("3")  # logical gap
    page.fill("#step-comment", "b does not follow from a alone")
    page.keyboard.press("Enter")
    page.wait_for_selector("#step-list li")
    assert "Logical gap" in page.inner_text("#step-list")
    assert page.locator("#transcript .seg.step-logical_gap").count() >= 1
    page.keyboard.press("2")  # 2 points on (1)
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Draft kept')")
    screenshot(page, "label_page_step_label")

    response.refresh_from_db()
    draft = LabelDraft.objects.get(response=response, user=annotator)
    step = draft.payload["step_labels"][0]
    assert response.transcript[step["start"] : step["end"]] == "we get $b=2$"

    page.goto(f"{live_server.url}/label/")
    page.goto(f"{live_server.url}/label/{response.pk}/")
    page.wait_for_selector("#draft-note:not([hidden])")
    assert page.input_value("#group-0 input.points") == "2"
    assert "Logical gap" in page.inner_text("#step-list")

    page.keyboard.press("s")
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Saved version 1')")
    saved = Label.objects.get(response=response, annotator=annotator)
    assert saved.step_labels.get().quote == "we get $b=2$"
    assert not LabelDraft.objects.filter(response=response, user=annotator).exists()


def test_a_stale_save_shows_both_versions(page, live_server, annotator, reviewer):
    _, (response, *_) = assign(annotator)
    label = services.save_label(response=response, user=annotator, data=full_label(1, 1), base_version=0).label
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/label/{response.pk}/?annotation={label.pk}")
    page.wait_for_selector("#group-0.focused")
    services.save_label(response=response, user=annotator, data=full_label(2, 2), base_version=1)  # meanwhile
    page.keyboard.press("3")
    page.keyboard.press("s")
    page.wait_for_selector("#conflict:not([hidden])")
    table = page.inner_text("#conflict-table")
    assert "Yours (from version 1)" in table and "version 2 by ann1" in table
    screenshot(page, "label_page_conflict")
    assert Label.objects.get(pk=label.pk).sub_scores == {"(1)": 2, "(2)": 2}
    page.click("#keep-mine")
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Saved version 3')")
    assert Label.objects.get(pk=label.pk).sub_scores == {"(1)": 3, "(2)": 1}


def test_step_dialog_takes_the_sub_question_of_the_passage_and_the_list_renders_math(page, live_server, annotator):
    _, (response, *_) = assign(annotator)
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/label/{response.pk}/")
    page.wait_for_selector("#group-0.focused")  # scoring (1)
    select_text(page, "so the minimum is")  # a passage of (2)
    page.keyboard.press("e")
    page.wait_for_selector("#step-form:not([hidden])")
    assert page.input_value("#step-sub") == "(2)"
    page.keyboard.press("Escape")
    page.evaluate("""() => {  // "$f'(x)=2x$, so": from the formula on, as a person would select it
        const seg = [...document.querySelectorAll('#transcript .seg')].find(s => s.textContent.includes(', so the'));
        const math = seg.previousElementSibling;
        const range = document.createRange();
        range.setStartBefore(math); range.setEnd(seg.firstChild, 4);
        const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
    }""")
    page.keyboard.press("e")
    page.wait_for_selector("#step-form:not([hidden])")
    assert page.input_value("#step-sub") == "(2)"
    page.keyboard.press("Enter")
    page.wait_for_selector("#step-list li .katex")  # $f'(x)=2x$ rendered, not raw
    assert "$" not in page.inner_text("#step-list")
    select_text(page, "we get")  # back in (1)
    page.keyboard.press("e")
    page.wait_for_selector("#step-form:not([hidden])")
    assert page.input_value("#step-sub") == "(1)"
    page.keyboard.press("Escape")
    # The step label's draft save must be done before the test's database is emptied.
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Draft kept')")


@pytest.mark.parametrize("width, height", [(1280, 800), (1024, 768)])
def test_labelling_screen_at_laptop_and_tablet_sizes(browser, live_server, annotator, reviewer, width, height):
    """At 1280x800 the score column does not scroll on its own and "Other labels" shows in the
    first screen; on a tablet in landscape the answer and the score sit side by side."""
    _, (response, *_) = assign(annotator)
    services.save_label(response=response, user=annotator, data=full_label(2, 3), base_version=0, submit=True)
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/label/{response.pk}/")
    page.wait_for_selector("#transcript .katex")
    size = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth, window.innerHeight]")
    assert size[0] <= size[1]
    boxes = {name: page.locator(name).bounding_box() for name in ("#col-transcript", "#col-score", "#label-form")}
    assert boxes["#col-score"]["x"] > boxes["#col-transcript"]["x"]  # side by side
    assert boxes["#label-form"]["y"] < size[2] and boxes["#col-transcript"]["y"] < size[2]
    if width == 1280:
        assert page.evaluate("() => getComputedStyle(document.getElementById('col-score')).overflowY") == "visible"
        assert page.locator("#other-labels h2").bounding_box()["y"] < size[2]
    screenshot(page, f"label_page_{width}x{height}")
    context.close()


def test_active_time_counts_input_and_not_idle_time(page, live_server, annotator, monkeypatch):
    """Time counts while there was input in the last N seconds (2 here), not while the person is idle."""
    import time

    monkeypatch.setattr(services, "ACTIVE_IDLE_SECONDS", 2)
    _, (response, *_) = assign(annotator)
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/label/{response.pk}/")
    page.wait_for_selector("#group-0.focused")
    started = time.monotonic()
    for _ in range(8):  # four seconds of work
        page.keyboard.press("j")
        page.wait_for_timeout(500)
    page.wait_for_timeout(5000)  # idle: only the first 2 seconds of it count
    page.keyboard.press("2")
    page.keyboard.press("s")
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Saved version 1')")
    wall = time.monotonic() - started
    seconds = Label.objects.get(response=response, annotator=annotator).active_seconds
    assert 4 <= seconds <= wall - 2, (seconds, wall)


def test_no_restored_draft_note_for_an_autosave_of_what_is_saved(page, live_server, annotator):
    """A draft holding exactly the saved label (one's own autosave that reached the server after
    the save) restores nothing and says nothing; a draft with real changes says they are back."""
    _, (response, *_) = assign(annotator)
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/label/{response.pk}/")
    page.wait_for_selector("#group-0.focused")
    page.keyboard.press("2")
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Draft kept')")
    payload = LabelDraft.objects.get(response=response, user=annotator).payload
    page.keyboard.press("s")
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Saved version 1')")
    label = Label.objects.get(response=response, annotator=annotator)
    # The late autosave: same content, made from version 0.
    LabelDraft.objects.create(response=response, user=annotator, payload=payload, base_version=0, label=label)
    page.goto(f"{live_server.url}/label/{response.pk}/")
    page.wait_for_selector("#group-0.focused")
    assert page.locator("#draft-note").is_hidden()
    assert page.input_value("#group-0 input.points") == "2"

    LabelDraft.objects.filter(response=response, user=annotator).update(
        payload={**payload, "sub_scores": {"(1)": "3"}}, base_version=1,
    )
    page.goto(f"{live_server.url}/label/{response.pk}/")
    page.wait_for_selector("#draft-note:not([hidden])")
    assert page.inner_text("#draft-note").startswith("Unsaved changes from")
    assert page.input_value("#group-0 input.points") == "3"
