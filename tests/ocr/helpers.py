"""Small helpers shared by the ocr view tests."""
from ocr import services
from ocr.models import OcrRun, Page

from .conftest import distinct_image, png_bytes


def pages_without_ocr(make_batch, count, start=0, student="s", question="3-17"):
    """A batch of `count` pages whose OCR is recorded as done (no engine runs in the test)."""
    files = [(f"{student}{i:03d}_{question}_1.png", png_bytes(distinct_image(start + i))) for i in range(count)]
    batch, _ = make_batch(files)
    for run in OcrRun.objects.filter(page__batch=batch):
        OcrRun.objects.filter(pk=run.pk).update(status="done", raw_text=f"text of page {run.page_id}", seconds=0.5)
        run.refresh_from_db()
        services.seed_transcript(run)
    return batch, list(Page.objects.filter(batch=batch).order_by("id"))
