"""Builders for class-PDF tests: a PDF of packets of rendered pages, a roster and a template."""
import io
import json

from ocr import synthetic
from ocr.services import Upload

from .conftest import distinct_image


def class_pdf(n_pages, *, text=False, resolution=100):
    """A PDF of `n_pages` pages, every page's pixels distinct; with `text`, each page is a rendered
    exam line (OCR-able), else a tiny blank-ish page (cheap, for tests that do not OCR)."""
    if text:
        lines = synthetic.EXAM_LINES
        images = [synthetic.render_page([lines[i % len(lines)], f"page {i + 1}"], width=520, font_size=30, margin=24)
                  for i in range(n_pages)]
    else:
        images = [distinct_image(1000 + i, size=(120, 160)) for i in range(n_pages)]
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", save_all=True, append_images=images[1:], resolution=resolution)
    return buffer.getvalue()


def roster(*students, header="student_id,name"):
    rows = [header] + [f"{student},Name of {student}" for student in students]
    return ("\n".join(rows) + "\n").encode()


def template(pages, pages_per_student=None):
    return json.dumps({"pages_per_student": pages_per_student or len(pages), "pages": pages}).encode()


def pdf_upload(data, name="class.pdf"):
    return Upload(name=name, data=data, declared_type="application/pdf")
