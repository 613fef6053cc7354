"""Fixtures of the ocr tests: an exam with labelled questions and page images made on the fly."""
import io

import pytest
from PIL import Image

from ocr import synthetic
from ocr.services import Upload, create_batch, ingest_uploads
from tests.factories import make_question
from tests.s3_server import s3_bucket, s3_server  # noqa: F401 (the S3 test server fixtures)


@pytest.fixture
def exam_questions(db):
    """Three questions of one exam: labels 3-17 and 3-18, and 5-1 used twice (ambiguous)."""
    q317 = make_question("Question 3-17: find $a_n$.", exam_name="Scan exam", location="3-17")
    q318 = make_question("Question 3-18: prove $x>0$.", exam_name="Scan exam", location="3-18")
    q51a = make_question("Question 5-1 (A): $f(x)=x^2$.", exam_name="Scan exam", location="5-1")
    q51b = make_question("Question 5-1 (B): $g(x)=\\ln x$.", exam_name="Scan exam", location="5-1")
    return {"exam": q317.exam, "3-17": q317, "3-18": q318, "5-1a": q51a, "5-1b": q51b}


def png_bytes(image):
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def jpeg_bytes(image, **params):
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, "JPEG", **params)
    return buffer.getvalue()


def small_page(seed=0, lines=1, width=520):
    """A quick, clean page (one or two short lines): cheap to OCR in view tests."""
    text_lines = synthetic.page_lines(seed, lines)
    return synthetic.render_page(text_lines, width=width, font_size=30, margin=24, line_gap=20), "\n".join(text_lines)


def distinct_image(n, size=(160, 120)):
    """A page image whose pixels differ for every n (so duplicates are not detected by accident)."""
    image = Image.new("L", size, 255)
    for i in range(8):
        image.putpixel(((n * 7 + i) % size[0], (n // size[0] + i) % size[1]), 0)
    image.putpixel((n % size[0], (n // size[0]) % size[1]), 1)
    return image


@pytest.fixture
def make_batch(exam_questions, reviewer):
    def make(files, engine="tesseract"):
        batch = create_batch(exam=exam_questions["exam"], engine=engine, user=reviewer)
        results = ingest_uploads(batch, [Upload(name, data) for name, data in files])
        return batch, results

    return make


@pytest.fixture
def run_tasks(django_capture_on_commit_callbacks):
    """Run the OCR tasks queued inside the block (on commit, as in production), eagerly."""

    def runner():
        return django_capture_on_commit_callbacks(execute=True)

    return runner


@pytest.fixture
def vision_llm_server(settings, monkeypatch):
    """The scripted OpenAI-compatible server as the vision endpoint (tests.llm_server)."""
    from tests.llm_server import LlmServer

    with LlmServer() as server:
        settings.OCR_VISION_BASE_URL = server.url
        settings.OCR_VISION_MODEL = "test-vision"
        settings.OCR_VISION_API_KEY_ENV = "REALMATH_LLM_KEY_OCR_TEST"
        settings.OCR_VISION_MAX_RETRIES = 0
        monkeypatch.setenv("REALMATH_LLM_KEY_OCR_TEST", "vision-test-key")
        yield server
