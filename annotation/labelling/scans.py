"""Scans beside labels, from the app that keeps them: the scan panel of the labelling and
adjudication screens, and the scan batches the Assign page and `assign_labels --batch` choose from.

annotation imports no app above it. The app with scans names a module as `scan_panel` on its
AppConfig (ocr: `ocr.panels`; read through `core.app_hooks`), which has `response_scans_with_urls(response)`
(the page images with their word boxes and URLs, for static/js/scan_viewer.js), `flag_url(response)`,
`scan_batches_to_assign()`, `scan_batch(pk)` and `answers_waiting(batch, question)`. Without such an
app a response has no scans, there are no batches and nothing waits.
"""
from core.app_hooks import app_modules


def _panel():
    panels = app_modules("scan_panel")
    return panels[0] if panels else None


def response_scans(response) -> list[dict]:
    panel = _panel()
    return panel.response_scans_with_urls(response) if panel else []


def flag_url(response) -> str | None:
    panel = _panel()
    return panel.flag_url(response) if panel else None


def scan_batches_to_assign():
    panel = _panel()
    return panel.scan_batches_to_assign() if panel else []


def scan_batch(pk):
    """The scan batch `pk` (its exam selected), or None."""
    panel = _panel()
    return panel.scan_batch(pk) if panel else None


def answers_waiting(batch, question=None) -> int:
    """How many of the batch's answers (to `question`) are not verified yet."""
    panel = _panel()
    return panel.answers_waiting(batch, question) if panel else 0
