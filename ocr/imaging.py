"""Reading untrusted uploads into page images, and preparing pages for people and OCR engines.

Reading (`read_upload`) decides a file's type from its bytes, never from its name or declared
MIME type, hands Pillow only the decoder that type needs, and checks sizes before decoding, so a
decompression bomb is refused from its header. Every refusal is an `UploadRefused` with a
sentence a person can act on.

Memory stays bounded by one page: the frames of a multi-page TIFF are decoded one at a time as
the caller asks for them, and a PDF is only measured on upload (`inspect_pdf`: it opens, is not
encrypted, has few enough pages, each page's size read from its media box): each page is
rendered later, alone, by the worker (`render_pdf_page`), at a scale chosen from its size so
that it has at most `OCR_MAX_PIXELS` pixels.

Preparing (`prepare_page`) turns an oriented page into: a grayscale page with its background
flattened, a thresholded (Sauvola) page, the skew angle found on it, a deskewed rendition for the
screen, and a thumbnail. All renditions share one geometry, so boxes found on the work image map
to the screen image by one scale factor.
"""
import hashlib
import io
import math
import threading
import warnings
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.utils.translation import gettext
from django.utils.translation import gettext_noop as N
from PIL import Image, ImageFilter, ImageOps

from core.stored_text import part

try:  # HEIC/HEIF photos from phones; the decoder is an optional extra.
    import pillow_heif

    pillow_heif.register_heif_opener()
    HEIF_AVAILABLE = True
except ImportError:  # pragma: no cover - pillow-heif is in requirements.txt
    HEIF_AVAILABLE = False

# Pillow's own guard, set to our limit: above it Pillow warns (turned into an error below),
# above twice it raises DecompressionBombError. We also check sizes ourselves before decoding.
Image.MAX_IMAGE_PIXELS = settings.OCR_MAX_PIXELS

ACCEPTED_KINDS = "JPEG, PNG, TIFF, HEIC and PDF"
PILLOW_FORMATS = {"jpeg": ["JPEG"], "png": ["PNG"], "tiff": ["TIFF"], "heic": ["HEIF"]}
_PDFIUM_LOCK = threading.Lock()  # PDFium is not thread-safe; gunicorn runs threads.


class UploadRefused(Exception):
    """A file that cannot become pages; the message says why, in plain words."""


@dataclass
class DecodedPage:
    image: Image.Image  # mode L or RGB, oriented upright
    checksum: str
    note: str = ""


@dataclass
class PdfPagePlan:
    """A PDF page measured from its media box, not rendered: the worker renders it at `scale`."""

    index: int
    width: int  # pixels it will have
    height: int
    scale: float
    note: str = ""


@dataclass
class ReadResult:
    """What an upload holds: `pages` are DecodedPages (decoded one at a time when a generator) or, for a
    PDF, PdfPagePlans; `count` is how many."""

    kind: str
    pages: object
    count: int = None
    notes: list = field(default_factory=list)

    def __post_init__(self):
        if self.count is None:
            self.count = len(self.pages)


# --- recognising a file by its bytes ---------------------------------------------------------

def sniff(data):
    """Name the kind of a file from its first bytes: jpeg, png, tiff, heic, pdf or something else."""
    head = data[:64]
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return "tiff"
    if head[4:8] == b"ftyp" and head[8:12] in (b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1", b"avif"):
        return "heic" if head[8:12] != b"avif" else "avif"
    if b"%PDF-" in data[:1024]:
        return "pdf"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head.startswith(b"BM"):
        return "bmp"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head.startswith(b"PK\x03\x04"):
        return "zip"
    if head.startswith(b"MZ"):
        return "exe"
    if head.startswith(b"\x7fELF"):
        return "elf"
    if head.startswith((b"%!PS", b"\xc5\xd0\xd3\xc6")):
        return "postscript"
    stripped = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if stripped.startswith((b"<svg", b"<?xml")) and b"<svg" in data[:4096].lower():
        return "svg"
    if stripped.startswith((b"<!doctype html", b"<html", b"<script", b"<?xml", b"<")):
        return "markup"
    try:
        data[:4096].decode("utf-8")
        return "text"
    except UnicodeDecodeError:
        return "unknown"


_KIND_WORDS = {
    "gif": "a GIF image",
    "bmp": "a BMP image",
    "webp": "a WebP image",
    "avif": "an AVIF image",
    "zip": "a ZIP archive (or an Office document)",
    "exe": "a Windows program",
    "elf": "a Linux program",
    "postscript": "a PostScript/EPS file",
    "svg": "an SVG drawing (SVG can carry scripts and is never accepted)",
    "markup": "an HTML/XML document",
    "text": "plain text",
    "unknown": "not a file type we know",
}


_SUFFIX_KINDS = {
    "jpg": "jpeg", "jpeg": "jpeg", "jpe": "jpeg", "png": "png", "tif": "tiff", "tiff": "tiff",
    "heic": "heic", "heif": "heic", "pdf": "pdf",
}
_MIME_KINDS = {
    "image/jpeg": "jpeg", "image/pjpeg": "jpeg", "image/png": "png", "image/tiff": "tiff",
    "image/heic": "heic", "image/heif": "heic", "application/pdf": "pdf",
}


def mismatch_notes(name, declared_type, kind):
    """Notes (core.stored_text parts) for a file whose name or declared MIME type disagrees with its content (content wins)."""
    notes = []
    suffix = (name or "").rsplit(".", 1)[-1].lower() if "." in (name or "") else ""
    if _SUFFIX_KINDS.get(suffix, kind) != kind or (suffix and suffix not in _SUFFIX_KINDS):
        notes.append(part(N("Named .%(suffix)s but the content is %(kind)s; read as %(kind)s."),
                          suffix=suffix, kind=kind.upper()))
    declared = (declared_type or "").split(";")[0].strip().lower()
    if declared and _MIME_KINDS.get(declared) != kind:
        notes.append(part(N("Sent as %(declared)s but the content is %(kind)s; read as %(kind)s."),
                          declared=declared, kind=kind.upper()))
    return notes


def describe_kind(kind):
    return _KIND_WORDS.get(kind, kind.upper())


# --- reading an upload into pages -------------------------------------------------------------

def read_upload(data, *, max_bytes=None):
    """Decode an uploaded file into upright pages, or raise UploadRefused with the reason."""
    if not data:
        raise UploadRefused(gettext("The file is empty (0 bytes)."))
    if len(data) > (max_bytes or settings.OCR_MAX_UPLOAD_BYTES):
        refuse_size(len(data), max_bytes)
    kind = sniff(data)
    if kind == "pdf":
        return ReadResult("pdf", inspect_pdf(data))
    if kind in PILLOW_FORMATS:
        if kind == "heic" and not HEIF_AVAILABLE:  # pragma: no cover
            raise UploadRefused(gettext("HEIC photos need the pillow-heif package, which is not installed."))
        return read_image(data, kind)
    raise UploadRefused(gettext("The content is %(describe_kind)s, not a page image. Accepted: %(ACCEPTED_KINDS)s.") % {"describe_kind": describe_kind(kind), "ACCEPTED_KINDS": ACCEPTED_KINDS})


def refuse_size(size, max_bytes=None):
    max_bytes = max_bytes or settings.OCR_MAX_UPLOAD_BYTES
    raise UploadRefused(
        gettext("The file is %(_megabytes)s, over the %(_megabytes2)s limit per file; scan at 300 dpi or split it.") % {"_megabytes": _megabytes(size), "_megabytes2": _megabytes(max_bytes)}
    )


def read_image(data, kind):
    """Read a JPEG/PNG/TIFF/HEIC file: every frame's size is checked from the headers first, then the
    frames of a multi-page TIFF are decoded one at a time, as the result's `pages` are iterated."""
    max_pages = settings.OCR_MAX_PDF_PAGES
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data), formats=PILLOW_FORMATS[kind])
        except Image.DecompressionBombError as exc:
            raise UploadRefused(gettext("Refused as a decompression bomb: %(exc)s") % {"exc": exc}) from exc
        except Image.DecompressionBombWarning as exc:
            raise UploadRefused(gettext("Refused as a decompression bomb: %(exc)s") % {"exc": exc}) from exc
        except Exception as exc:  # noqa: BLE001 - any decoder failure on untrusted bytes is a refusal
            raise UploadRefused(
                gettext("The %(upper)s file is truncated or corrupt (%(_reason)s); upload it again.") % {"upper": kind.upper(), "_reason": _reason(exc)}
            ) from exc
    try:
        frames = getattr(image, "n_frames", 1) or 1
        if frames > max_pages:
            raise UploadRefused(gettext("The %(upper)s file has %(frames)s pages; the limit is %(max_pages)s per file.") % {"upper": kind.upper(), "frames": frames, "max_pages": max_pages})
        for index in range(frames):
            _seek(image, index, frames, kind)  # reads the frame's header, not its pixels
            check_dimensions(*image.size)
    except BaseException:
        image.close()
        raise
    if frames == 1:
        with image:
            return ReadResult(kind, [_decode_frame(image, kind)])
    return ReadResult(kind, _decode_frames(image, kind, frames), count=frames)


def _seek(image, index, frames, kind):
    if frames == 1:
        return
    try:
        image.seek(index)
    except Exception as exc:  # noqa: BLE001 - a broken frame directory
        raise UploadRefused(gettext("Page %(value)s of the %(upper)s file is unreadable (%(_reason)s).") % {"value": index + 1, "upper": kind.upper(), "_reason": _reason(exc)}) from exc


def _decode_frames(image, kind, frames):
    """Decode the frames one at a time; the caller drops each before asking for the next."""
    with image:
        for index in range(frames):
            _seek(image, index, frames, kind)
            yield _decode_frame(image, kind)


def _decode_frame(image, kind):
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image.load()
            note = ""
            try:
                upright = ImageOps.exif_transpose(image)
            except Exception as exc:  # noqa: BLE001 - a broken EXIF block must not lose the page
                upright, note = image, f"EXIF orientation unreadable ({_reason(exc)}); page kept as stored."
            normalised = normalise_mode(upright)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise UploadRefused(gettext("Refused as a decompression bomb: %(exc)s") % {"exc": exc}) from exc
        except Exception as exc:  # noqa: BLE001 - truncated or corrupt pixel data
            raise UploadRefused(
                gettext("The %(upper)s file is truncated or corrupt (%(_reason)s); upload it again.") % {"upper": kind.upper(), "_reason": _reason(exc)}
            ) from exc
    return DecodedPage(normalised, pixel_checksum(normalised), note)


def check_dimensions(width, height):
    """Refuse pages too large to decode safely or too small to be a page, before decoding them."""
    max_pixels, max_side, min_side = settings.OCR_MAX_PIXELS, settings.OCR_MAX_SIDE, settings.OCR_MIN_SIDE
    if width * height > max_pixels:
        raise UploadRefused(
            gettext("Refused as a decompression bomb: %(width)s×%(height)s is %(value)s megapixels, over the limit of %(value2)s.") % {"width": width, "height": height, "value": format(width * height / 1000000.0, ".0f"), "value2": format(max_pixels / 1000000.0, ".0f")}
        )
    if max(width, height) > max_side:
        raise UploadRefused(gettext("The image is %(width)s×%(height)s pixels; no side may exceed %(max_side)s.") % {"width": width, "height": height, "max_side": max_side})
    if min(width, height) < min_side:
        raise UploadRefused(gettext("The image is %(width)s×%(height)s pixels, too small to be a page (at least %(min_side)s).") % {"width": width, "height": height, "min_side": min_side})


def normalise_mode(image):
    """Return an 8-bit L or RGB copy: transparency flattened onto white, 16-bit scaled, CMYK converted."""
    mode = image.mode
    if mode in ("L", "RGB"):
        return image.copy()
    if mode == "1":
        return image.convert("L")
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        array = np.asarray(image, dtype=np.float64)
        top = array.max() or 1.0
        return Image.fromarray(np.clip(array * (255.0 / top), 0, 255).astype(np.uint8), "L")
    if mode == "F":
        array = np.nan_to_num(np.asarray(image, dtype=np.float64))
        span = (array.max() - array.min()) or 1.0
        return Image.fromarray(((array - array.min()) * (255.0 / span)).astype(np.uint8), "L")
    if mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    if mode in ("LA", "La", "PA") or image.mode in ("RGBA", "RGBa"):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return image.convert("RGB")


def pixel_checksum(image, rows_per_step=256):
    """SHA-256 of the mode, size and pixels, hashed in strips of rows (no full copy of a large page)."""
    digest = hashlib.sha256(f"{image.mode}:{image.width}x{image.height}:".encode())
    for top in range(0, image.height, rows_per_step):
        digest.update(image.crop((0, top, image.width, min(image.height, top + rows_per_step))).tobytes())
    return digest.hexdigest()


def _open_pdf(data):
    import pypdfium2 as pdfium  # imported here: only PDF uploads need PDFium

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise UploadRefused(
                gettext("The PDF is encrypted with a password; save an unprotected copy and upload that.")
            ) from exc
        raise UploadRefused(gettext("The PDF could not be opened (%(_reason)s).") % {"_reason": _reason(exc)}) from exc


def inspect_pdf(data, *, max_pages=None):
    """Check a PDF and measure its pages from their media boxes, rendering nothing: PdfPagePlans."""
    max_pages = max_pages or settings.OCR_MAX_PDF_PAGES
    with _PDFIUM_LOCK:
        document = _open_pdf(data)
        try:
            count = len(document)
            if count == 0:
                raise UploadRefused(gettext("The PDF has no pages."))
            if count > max_pages:
                raise UploadRefused(
                    gettext("The PDF has %(count)s pages; the limit is %(max_pages)s per file. Split it and upload the parts.") % {"count": count, "max_pages": max_pages}
                )
            return [plan_pdf_page(index, *_page_size(document, index)) for index in range(count)]
        finally:
            document.close()


def _page_size(document, index):
    try:
        return document.get_page_size(index)  # from the page dictionary; the content is not parsed
    except Exception as exc:  # noqa: BLE001 - PDFium errors on hostile content
        raise UploadRefused(gettext("Page %(value)s of the PDF could not be read (%(_reason)s).") % {"value": index + 1, "_reason": _reason(exc)}) from exc


def plan_pdf_page(index, width_pt, height_pt):
    """The scale and pixel size of a PDF page: OCR_PDF_DPI, lowered so that the page has at most
    OCR_MAX_PIXELS pixels and no side over OCR_MAX_SIDE (a giant media box is rendered smaller,
    not refused); a page that would still be too small or too thin to read is refused."""
    dpi, max_pixels, max_side = settings.OCR_PDF_DPI, settings.OCR_MAX_PIXELS, settings.OCR_MAX_SIDE
    label = f"Page {index + 1} of the PDF"
    if not (math.isfinite(width_pt) and math.isfinite(height_pt) and width_pt > 0 and height_pt > 0):
        raise UploadRefused(gettext("%(label)s has no usable size (%(width_pt)s × %(height_pt)s pt).") % {"label": label, "width_pt": width_pt, "height_pt": height_pt})
    scale = min(dpi / 72.0, max_side / max(width_pt, height_pt), math.sqrt(max_pixels / (width_pt * height_pt)))
    while True:  # PDFium rounds each side up: shrink until the rounded size fits too
        width, height = math.ceil(width_pt * scale), math.ceil(height_pt * scale)
        if width * height <= max_pixels and max(width, height) <= max_side:
            break
        scale *= 0.999
    try:
        check_dimensions(width, height)
    except UploadRefused as exc:
        raise UploadRefused(f"{label}: {exc}") from exc
    note = ""
    if scale < dpi / 72.0 * 0.999:
        note = (f"{label} is {width_pt / 72 * 2.54:.0f} × {height_pt / 72 * 2.54:.0f} cm; rendered at "
                f"{scale * 72:.0f} dpi instead of {dpi} to stay within {max_pixels / 1e6:.0f} megapixels.")
    return PdfPagePlan(index, width, height, scale, note)


def render_pdf_page(data, index):
    """Render one page of a PDF (bytes or an open file) in the worker, at the scale its size allows: a DecodedPage."""
    with _PDFIUM_LOCK:
        document = _open_pdf(data)
        try:
            if not 0 <= index < len(document):
                raise UploadRefused(gettext("The PDF has no page %(value)s.") % {"value": index + 1})
            plan = plan_pdf_page(index, *_page_size(document, index))
            image = _render(document, plan)
        finally:
            document.close()
    return DecodedPage(image, pixel_checksum(image), plan.note)


def _render(document, plan):
    page = bitmap = None
    try:
        page = document[plan.index]
        bitmap = page.render(scale=plan.scale, grayscale=False, may_draw_forms=False)
        if bitmap.width * bitmap.height > settings.OCR_MAX_PIXELS:  # never expected: the plan bounds it
            raise UploadRefused(gettext("Page %(value)s of the PDF rendered larger than planned; refused.") % {"value": plan.index + 1})
        image = bitmap.to_pil()  # PIL copies PDFium's BGR pixels into RGB, so the bitmap can go at once
    except UploadRefused:
        raise
    except Exception as exc:  # noqa: BLE001 - PDFium errors on hostile content
        raise UploadRefused(gettext("Page %(value)s of the PDF could not be rendered (%(_reason)s).") % {"value": plan.index + 1, "_reason": _reason(exc)}) from exc
    finally:
        if bitmap is not None:
            bitmap.close()
        if page is not None:
            page.close()
    return image if image.mode in ("L", "RGB") else normalise_mode(image)


def _reason(exc):
    text = str(exc).strip() or type(exc).__name__
    return text[:200]


def _megabytes(n):
    return f"{n / (1024 * 1024):.1f} MB"


def encode_png(image, compress_level=1):
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=compress_level)
    return buffer.getvalue()


def encode_jpeg(image, quality=85):
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, "JPEG", quality=quality, optimize=True)
    return buffer.getvalue()


def open_stored_png(data):
    """Open a page master we wrote ourselves (still within the pixel limit)."""
    image = Image.open(io.BytesIO(data), formats=["PNG"])
    image.load()
    return image


# --- preparing a page --------------------------------------------------------------------------

@dataclass
class PreparedPage:
    display: Image.Image  # RGB/L, deskewed, at web size: what the screen shows
    gray: Image.Image  # L, flattened and deskewed, at work size: input of learned engines
    binary: Image.Image | None  # L (0/255), thresholded, at work size: input of tesseract (None: not made)
    thumb: Image.Image
    skew_degrees: float
    work_to_display: float  # multiply work-image pixel coordinates by this to get screen pixels
    # The page's size at work scale before the deskew rotation (the form, upright, sits in the middle
    # of the deskewed images): where ocr.redaction finds a template's regions on a tilted scan.
    form_size: tuple[int, int] | None = None


def prepare_page(image, *, deskew=True, reads="binary"):
    """Flatten and deskew a page; make the screen rendition, a thumbnail and what an engine reads.

    `reads` is the engine's input kind. For "binary" (tesseract) the gray page is rotated by
    Pillow's bicubic and thresholded: tesseract's output changes with the interpolation (OpenCV's
    rotation, cubic or linear, doubles its character error rate on spoiled pages). For "gray"
    (RapidOCR) and "display" no threshold is made and the gray page is rotated by OpenCV, about
    five times faster, with RapidOCR's error rate unchanged (both measured in docs/ocr.md).
    """
    work_side, web_side, thumb_side = (
        settings.OCR_WORK_MAX_SIDE,
        settings.OCR_WEB_MAX_SIDE,
        settings.OCR_THUMB_MAX_SIDE,
    )
    colour = fit_within(image, work_side)
    # A 3x3 median removes sensor noise and dust specks without thinning pen strokes.
    flat = median3(flatten_background(colour.convert("L")))
    angle = estimate_skew(flat) if deskew else 0.0
    binary = None
    if reads == "binary":
        gray = flat.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255) if angle else flat
        binary = median3(sauvola_threshold(gray))
    else:
        gray = rotate_expand(flat, angle) if angle else flat
    display = screen_rendition(colour, angle, gray.size, web_side)
    thumb = shrink_within(display, thumb_side)
    return PreparedPage(
        display=display,
        gray=gray,
        binary=binary,
        thumb=thumb,
        skew_degrees=angle,
        work_to_display=display.width / gray.width,
        form_size=flat.size,
    )


def fit_within(image, max_side):
    """A copy scaled down (never up) so that its longer side is at most max_side."""
    longest = max(image.size)
    if longest <= max_side:
        return image.copy()
    scale = max_side / longest
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)


def shrink_within(image, max_side):
    """As fit_within, by OpenCV's area averaging (several times faster than Pillow's Lanczos on a
    full page; for images people look at, not for engine input)."""
    import cv2  # slow import (OpenCV): only processes that straighten or clean pages need it

    longest = max(image.size)
    if longest <= max_side:
        return image.copy()
    scale = max_side / longest
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return Image.fromarray(cv2.resize(np.asarray(image), size, interpolation=cv2.INTER_AREA), image.mode)


def screen_rendition(colour, angle, work_size, max_side):
    """The colour page as the screen shows it: the work image's frame (`work_size`, after the
    deskew rotation) scaled to at most `max_side`. The page is scaled first and rotated after,
    so the rotation works on the small image (it is only looked at: OpenCV, not Pillow)."""
    if not angle:
        return shrink_within(colour, max_side)
    scale = min(1.0, max_side / max(work_size))
    small = shrink_within(colour, max(1, round(max(colour.size) * scale)))
    size = (max(1, round(work_size[0] * scale)), max(1, round(work_size[1] * scale)))
    return rotate_expand(small, angle, size=size)


def median3(image):
    """3x3 median filter (OpenCV: some 100x faster than Pillow's MedianFilter on a full page)."""
    import cv2  # worker-side only: uploads never prepare pages

    return Image.fromarray(cv2.medianBlur(np.asarray(image), 3), image.mode)


def rotate_expand(image, angle, size=None):
    """Rotate `angle` degrees counter-clockwise (as Image.rotate) onto a canvas that holds the whole
    page (or of `size`, centred), filled with white; bilinear, by OpenCV (for screen renditions:
    several times faster than Pillow)."""
    import cv2  # slow import (OpenCV): only processes that straighten or clean pages need it

    array = np.asarray(image)
    height, width = array.shape[:2]
    matrix = cv2.getRotationMatrix2D((width / 2.0, height / 2.0), angle, 1.0)
    cos, sin = abs(matrix[0, 0]), abs(matrix[0, 1])
    new_width, new_height = size or (int(math.ceil(width * cos + height * sin - 1e-6)),
                                     int(math.ceil(width * sin + height * cos - 1e-6)))
    matrix[0, 2] += (new_width - width) / 2.0
    matrix[1, 2] += (new_height - height) / 2.0
    fill = 255 if array.ndim == 2 else (255,) * array.shape[2]
    rotated = cv2.warpAffine(array, matrix, (new_width, new_height), flags=cv2.INTER_LINEAR,
                             borderMode=cv2.BORDER_CONSTANT, borderValue=fill)
    return Image.fromarray(rotated, image.mode)


def flatten_background(gray):
    """Divide by an estimate of the paper's brightness: shadows and uneven light go, ink stays."""
    small_side = 256
    scale = min(1.0, small_side / max(gray.size))
    small = gray.resize((max(1, int(gray.width * scale)), max(1, int(gray.height * scale))), Image.Resampling.BILINEAR)
    # The local maximum removes the ink strokes (dark, thin); the blur smooths what remains.
    background = small.filter(ImageFilter.MaxFilter(5)).filter(ImageFilter.GaussianBlur(4))
    background = background.resize(gray.size, Image.Resampling.BILINEAR)
    ink = np.asarray(gray, dtype=np.float32)
    paper = np.maximum(np.asarray(background, dtype=np.float32), 1.0)
    flat = np.clip(ink / paper * 255.0, 0, 255)
    return Image.fromarray(flat.astype(np.uint8), "L")


def sauvola_threshold(gray, window=None, k=0.2, dynamic_range=128.0):
    """Sauvola's adaptive threshold: a pixel is ink if darker than mean * (1 + k (std / R - 1))."""
    array = np.asarray(gray, dtype=np.float32)
    if window is None:
        window = max(15, (min(array.shape) // 40) | 1)
    mean, std = _local_mean_std(array, window)
    threshold = mean * (1.0 + k * (std / dynamic_range - 1.0))
    binary = np.where(array > threshold, 255, 0).astype(np.uint8)
    return Image.fromarray(binary, "L")


def _local_mean_std(array, window):
    """Mean and standard deviation over a window around each pixel (edges repeated), by OpenCV box filters."""
    import cv2  # slow import (OpenCV): only processes that straighten or clean pages need it

    mean = cv2.boxFilter(array, -1, (window, window), borderType=cv2.BORDER_REPLICATE)
    squares = cv2.boxFilter(np.square(array), -1, (window, window), borderType=cv2.BORDER_REPLICATE)
    variance = np.maximum(squares - mean * mean, 0.0)
    return mean, np.sqrt(variance)


def estimate_skew(gray, max_degrees=8.0):
    """The rotation (degrees, counter-clockwise, as Image.rotate takes it) that levels text lines.

    Level text lines concentrate ink in few rows, which maximises the variance of the row
    profile of ink. For each candidate angle, every ink pixel of a small thresholded copy is
    projected onto the row it would land on after rotating (split linearly between two rows,
    so the measure is smooth); the angle with the largest variance wins, coarse then fine.
    """
    small = np.asarray(fit_within(gray, 900).convert("L"))
    ys, xs = np.nonzero(small < 160)
    if len(ys) < 50:  # a blank page has no lines to level
        return 0.0
    ys = ys.astype(np.float64)
    xs = xs.astype(np.float64) - small.shape[1] / 2.0
    margin = small.shape[1] * np.tan(np.radians(max_degrees)) + 2

    def spread(angle):
        rows = ys - xs * np.tan(np.radians(angle)) + margin
        low = np.floor(rows)
        upper_weight = rows - low
        size = int(small.shape[0] + 2 * margin + 2)
        profile = np.bincount(low.astype(np.int64), weights=1.0 - upper_weight, minlength=size)
        profile += np.bincount(low.astype(np.int64) + 1, weights=upper_weight, minlength=size)[:size]
        return float(np.var(profile))

    coarse = np.arange(-max_degrees, max_degrees + 0.01, 0.5)
    best = max(coarse, key=spread)
    fine = np.arange(best - 0.5, best + 0.51, 0.05)
    best = max(fine, key=spread)
    return 0.0 if abs(best) < 0.15 else round(float(best), 2)
