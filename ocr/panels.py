"""ocr's part of the labelling pages (`scan_panel = "ocr.panels"` on its AppConfig, read by
`annotation.labelling.scans`): the page images beside a label, the scan batches the Assign page
and `assign_labels --batch` choose from, and how many of a batch's answers still wait for checking.
"""
from django.urls import reverse

from .selectors import answers_waiting, response_scans, scan_batch, scan_batches_to_assign

__all__ = ["answers_waiting", "flag_url", "response_scans_with_urls", "scan_batch", "scan_batches_to_assign"]


def response_scans_with_urls(response):
    """The response's page images with their OCR word boxes (`selectors.response_scans`) and the
    URLs static/js/scan_viewer.js opens. The caller has checked the user may open this response;
    ocr.views.page_image checks it again."""
    scans = response_scans(response)
    for scan in scans:
        scan["url"] = reverse("ocr:page_image", args=[scan["id"], "web"])
        scan["correct"] = reverse("ocr:page_correct", args=[scan["id"]])
    return scans


def flag_url(response):
    """Where the labelling screen reports a transcript that does not match its scan."""
    return reverse("ocr:flag_transcript", args=[response.pk])
