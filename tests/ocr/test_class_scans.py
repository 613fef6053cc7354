"""A class's PDF cut into packets by a roster and a template: the mapping, and each refusal (nothing left behind)."""
import json
import os

import pytest
from django.core.files.storage import default_storage

from ocr import layout, packets
from ocr.models import OcrRun, Page, ScanBatch, ScanFile

from .class_scans import class_pdf, pdf_upload, roster, template

pytestmark = pytest.mark.django_db

TEMPLATE = {"1": None, "2": "3-17", "3": "+", "4": "3-18"}


def ingest(exam, pdf, roster_bytes, template_bytes, engine="tesseract", user=None):
    return packets.ingest_class_pdf(exam=exam, engine=engine, upload=pdf_upload(pdf), roster=roster_bytes,
                                    template=template_bytes, user=user, name="class 3B")


def media_files(settings):
    root = settings.MEDIA_ROOT
    return [os.path.join(d, f) for d, _, files in os.walk(root) for f in files] if os.path.exists(root) else []


def test_pages_are_mapped_to_student_question_and_page_in_answer(exam_questions, reviewer, run_tasks):
    exam = exam_questions["exam"]
    with run_tasks():
        batch = ingest(exam, class_pdf(12, text=True), roster("s01", "s02", "s03"), template(TEMPLATE),
                       user=reviewer)
    assert batch.roster == ["s01", "s02", "s03"] and batch.created_by == reviewer
    assert batch.template["pages_per_student"] == 4 and batch.template["pages"]["1"] is None
    assert batch.template["pages"]["3"] == {"question": exam_questions["3-17"].pk, "label": "3-17", "page": 2}
    places = [(p.index_in_file, p.student_id, p.question_id, p.page_number, p.is_cover)
              for p in Page.objects.filter(batch=batch).order_by("index_in_file")]
    q17, q18 = exam_questions["3-17"].pk, exam_questions["3-18"].pk
    expected = []
    for packet, student in enumerate(["s01", "s02", "s03"]):
        base = packet * 4
        expected += [(base, student, None, 1, True), (base + 1, student, q17, 1, False),
                     (base + 2, student, q17, 2, False), (base + 3, student, q18, 1, False)]
    assert places == expected
    # One stored PDF; answer pages OCR'd by their tasks (rendered there), covers rendered but not OCR'd.
    assert ScanFile.objects.get(batch=batch).stored
    runs = OcrRun.objects.filter(page__batch=batch)
    assert runs.count() == 9 and set(runs.values_list("status", flat=True)) == {"done"}
    assert not OcrRun.objects.filter(page__is_cover=True).exists()
    cover = Page.objects.get(batch=batch, index_in_file=4)
    assert cover.status == "prepared" and default_storage.exists(cover.thumb)
    second_page_of_s02 = Page.objects.get(batch=batch, index_in_file=6)
    assert "离心率" in second_page_of_s02.transcript.text  # PDF page 7 (EXAM_LINES[6]) became s02 3-17 page 2


def test_continuation_syntaxes_and_a_label_given_again(exam_questions):
    exam = exam_questions["exam"]
    pages = {"1": "3-17", "2": {"continues": True}, "3": "+", "4": "3-18", "5": "3-17"}
    batch = ingest(exam, class_pdf(5), roster("only"), template(pages))
    places = list(Page.objects.filter(batch=batch).order_by("index_in_file").values_list("question__location",
                                                                                        "page_number"))
    assert places == [("3-17", 1), ("3-17", 2), ("3-17", 3), ("3-18", 1), ("3-17", 4)]


def test_question_named_by_number_and_roster_in_another_dialect(exam_questions):
    exam = exam_questions["exam"]
    ambiguous = exam_questions["5-1b"]
    text = "\ufeffname;Student_ID\n李雷;s01\n\n韩梅梅;s02\n".encode("gb18030")
    batch = ingest(exam, class_pdf(2), text, template({"1": f"q{ambiguous.pk}"}))
    assert batch.roster == ["s01", "s02"]
    assert set(Page.objects.filter(batch=batch).values_list("question_id", flat=True)) == {ambiguous.pk}


REFUSALS = [
    ("page count", class_pdf(8), roster("a", "b", "c"), template({"1": "3-17", "2": "3-18"}),
     ["The PDF has 8 pages, but the roster has 3 students of 2 pages (6 pages)"]),
    ("unknown label", class_pdf(2), roster("a"), template({"1": "3-17", "2": "9-99"}),
     ["page 2 names question “9-99”, which exam “Scan exam” does not have"]),
    ("ambiguous label", class_pdf(2), roster("a"), template({"1": "3-17", "2": "5-1"}),
     ["page 2: “5-1” names 2 questions"]),
    ("duplicate students", class_pdf(6), roster("a", "b", "a"), template({"1": "3-17", "2": "3-18"}),
     ["ROSTER.csv lists student a twice (lines 2 and 4)"]),
    ("empty roster", class_pdf(2), roster(), template({"1": "3-17", "2": "3-18"}),
     ["ROSTER.csv lists no students"]),
    ("no student_id column", class_pdf(2), b"id,name\ns1,x\n", template({"1": "3-17", "2": "3-18"}),
     ["ROSTER.csv has no student_id column in its header row (line 1: id, name)"]),
    ("blank id", class_pdf(2), b"student_id,name\ns1,A\n  ,Li Lei\n", template({"1": "3-17"}, 1), ["ROSTER.csv line 3 has no student_id"]),
    ("roster not text", class_pdf(2), b"\x89PNG\r\n\x1a\n\x00\x00", template({"1": "3-17"}),
     ["ROSTER.csv is not a text file"]),
    ("malformed JSON", class_pdf(2), roster("a"), b'{"pages_per_student": 2, "pages": {"1": "3-17",}',
     ["TEMPLATE.json is not valid JSON (line 1, column"]),
    ("template not an object", class_pdf(2), roster("a"), b"[1, 2]", ["TEMPLATE.json must be an object"]),
    ("unknown key and bad count", class_pdf(2), roster("a"), b'{"pages_per_students": 2, "pages": {}}',
     ["unknown key(s) 'pages_per_students'", "pages_per_student must be a whole number"]),
    ("page missing", class_pdf(3), roster("a"), template({"1": "3-17", "3": "3-18"}, 3),
     ["does not say what page 2 holds"]),
    ("page outside the packet", class_pdf(2), roster("a"), template({"1": "3-17", "2": "3-18", "7": None}, 2),
     ["page '7' is not a page of a 2-page packet"]),
    ("page key a superscript digit", class_pdf(2), roster("a"), template({"1": "3-17", "²": "3-18"}, 2),
     ["page '²' is not a page of a 2-page packet", "does not say what page 2 holds"]),
    ("page key of 25 digits", class_pdf(2), roster("a"), template({"1": "3-17", "9" * 25: "3-18"}, 2),
     ["is not a page of a 2-page packet"]),
    ("page key an Arabic-Indic digit", class_pdf(2), roster("a"), template({"1": "3-17", "٢": "3-18"}, 2),
     ["page '٢' is not a page"]),
    ("continues nothing", class_pdf(2), roster("a"), template({"1": "+", "2": "3-18"}),
     ["page 1 continues the page before it, but there is none"]),
    ("continues a cover", class_pdf(2), roster("a"), template({"1": None, "2": {"continues": True}}),
     ["page 2 continues the page before it, but that is a cover page"]),
    ("all covers", class_pdf(2), roster("a"), template({"1": None, "2": None}), ["gives no page a question"]),
    ("not a PDF", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, roster("a"), template({"1": "3-17"}),
     ["class.pdf: A class scan must be one PDF"]),
    ("roster and template both wrong", class_pdf(2), roster("a", "a"), template({"1": "7-7"}),
     ["lists student a twice", "names question “7-7”"]),
]


@pytest.mark.parametrize("pdf, roster_bytes, template_bytes, expected", [r[1:] for r in REFUSALS],
                         ids=[r[0] for r in REFUSALS])
def test_refused_whole_with_a_message_and_nothing_left_behind(exam_questions, settings, pdf, roster_bytes,
                                                              template_bytes, expected):
    with pytest.raises(packets.ClassScanRefused) as refused:
        ingest(exam_questions["exam"], pdf, roster_bytes, template_bytes)
    message = " ".join(refused.value.problems)
    for words in expected:
        assert words in message, message
    assert not ScanBatch.objects.exists() and not ScanFile.objects.exists() and not Page.objects.exists()
    assert not OcrRun.objects.exists() and media_files(settings) == []


def test_the_same_class_pdf_twice_is_refused(exam_questions, settings):
    pdf = class_pdf(2)
    first = ingest(exam_questions["exam"], pdf, roster("a"), template({"1": "3-17", "2": "3-18"}))
    files_before = media_files(settings)
    with pytest.raises(packets.ClassScanRefused, match=f"already uploaded, as batch #{first.pk}"):
        ingest(exam_questions["exam"], pdf, roster("a"), template({"1": "3-17", "2": "3-18"}))
    assert ScanBatch.objects.count() == 1 and media_files(settings) == files_before


def test_a_failure_while_storing_leaves_no_file(exam_questions, settings, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(packets.services, "queue_ocr", broken)
    with pytest.raises(RuntimeError):
        ingest(exam_questions["exam"], class_pdf(2), roster("a"), template({"1": "3-17", "2": "3-18"}))
    assert not ScanBatch.objects.exists() and media_files(settings) == []


def test_limits_of_a_class_pdf(exam_questions, settings):
    settings.OCR_MAX_CLASS_PDF_PAGES = 3
    with pytest.raises(packets.ClassScanRefused, match="the limit is 3 per file"):
        ingest(exam_questions["exam"], class_pdf(4), roster("a", "b"), template({"1": "3-17", "2": "3-18"}))
    settings.OCR_MAX_CLASS_PDF_BYTES = 100
    with pytest.raises(packets.ClassScanRefused, match="over the 0.0 MB limit"):
        ingest(exam_questions["exam"], class_pdf(2), roster("a"), template({"1": "3-17", "2": "3-18"}))


def test_layout_reads_a_template_it_can_store(exam_questions):
    places, stored = layout.read_template(template({"1": "3-17", "2": "+"}), exam_questions["exam"])
    assert [(p.label, p.page_number, p.cover) for p in places] == [("3-17", 1, False), ("3-17", 2, False)]
    assert json.loads(json.dumps(stored)) == stored
