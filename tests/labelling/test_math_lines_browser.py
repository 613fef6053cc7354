"""Tall inline math (\\dfrac) on consecutive lines of a student answer does not overlap the line
above on the adjudication page: KaTeX sizes a line to its formulas' boxes exactly, so without
room between them the glyphs of two lines touch and overlap; our CSS leaves a gap."""
import pytest

from annotation.labelling import services
from annotation.models import Response, content_hash

from ..conftest import login, screenshot
from .helpers import full_label, labelled_setup

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TRANSCRIPT = (
    "(1) $f(\\alpha)=\\dfrac{\\sin 2\\alpha}{2}+\\dfrac{\\cos 2\\alpha}{2}=\\dfrac{1}{2}(\\sin 2\\alpha+\\cos 2\\alpha)$.\n"
    "Therefore $0<\\alpha<\\dfrac{\\pi}{2}$, so $\\alpha=\\dfrac{\\pi}{4}$.\n"
    "$f(\\alpha)=\\dfrac{1}{2}\\bigl(\\sin\\dfrac{\\pi}{2}+\\cos\\dfrac{\\pi}{2}\\bigr)=\\dfrac{1}{2}$.\n"
    "(2) Period: $T=\\dfrac{2\\pi}{\\omega}=\\dfrac{2\\pi}{2}=\\pi$."
)

OVERLAPS = """() => {
  const boxes = [...document.querySelectorAll('#transcript .katex .base')].map(b => b.getBoundingClientRect());
  const hits = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (x > 1 && y > -3) hits.push([i, j, Math.round(y)]);  // one above the other with less than 3 px between
  }
  return [boxes.length, hits];
}"""


def test_fractions_on_consecutive_lines_do_not_overlap(page, live_server, annotator, annotator2, reviewer):
    _, (response, *_) = labelled_setup(1)
    Response.objects.filter(pk=response.pk).update(transcript=TRANSCRIPT, transcript_hash=content_hash(TRANSCRIPT))
    services.assign_responses(responses=Response.objects.filter(pk=response.pk), annotators=[annotator, annotator2],
                              per_response=2, strategy="round_robin")
    for user, label in ((annotator, full_label(0, 0)), (annotator2, full_label(3, 4))):
        services.save_label(response=response, user=user, data=label, base_version=0, submit=True)
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/adjudication/{response.pk}/")
    page.wait_for_selector("#transcript .katex")
    count, overlaps = page.evaluate(OVERLAPS)
    screenshot(page, "adjudicate_fractions")
    assert count >= 8 and overlaps == []
