"""Reading untrusted uploads into page images, and preparing pages for people and OCR engines.

Reading (`read_upload`) decides a file's type from its bytes, never from its name or declared
MIME type, hands Pillow only the decoder that type needs, and checks sizes before decoding, so a
decompression bomb is refused from its header. Every refusal is an `UploadRefused` with a
sentence a person can act on.

Preparing (`prepare_page`) turns an oriented page into: a grayscale page with its background
flattened, a thresholded (Sauvola) page, the skew angle found on it, a deskewed rendition for the
screen, and a thumbnail. All renditions share one geometry, so boxes found on the work image map
to the screen image by one scale factor.
"""
import hashlib
import io
import threading
import warnings
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from PIL import Image, ImageFilter, ImageOps

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
class ReadResult:
    kind: str
    pages: list
    notes: list = field(default_factory=list)


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
    """Notes for a file whose name or declared MIME type disagrees with its content (content wins)."""
    notes = []
    suffix = (name or "").rsplit(".", 1)[-1].lower() if "." in (name or "") else ""
    if _SUFFIX_KINDS.get(suffix, kind) != kind or (suffix and suffix not in _SUFFIX_KINDS):
        notes.append(f"Named .{suffix} but the content is {kind.upper()}; read as {kind.upper()}.")
    declared = (declared_type or "").split(";")[0].strip().lower()
    if declared and _MIME_KINDS.get(declared) != kind:
        notes.append(f"Sent as {declared} but the content is {kind.upper()}; read as {kind.upper()}.")
    return notes


def describe_kind(kind):
    return _KIND_WORDS.get(kind, kind.upper())


# --- reading an upload into pages -------------------------------------------------------------

def read_upload(data, *, max_bytes=None):
    """Decode an uploaded file into upright pages, or raise UploadRefused with the reason."""
    if not data:
        raise UploadRefused("The file is empty (0 bytes).")
    if len(data) > (max_bytes or settings.OCR_MAX_UPLOAD_BYTES):
        refuse_size(len(data), max_bytes)
    kind = sniff(data)
    if kind == "pdf":
        return ReadResult("pdf", read_pdf(data))
    if kind in PILLOW_FORMATS:
        if kind == "heic" and not HEIF_AVAILABLE:  # pragma: no cover
            raise UploadRefused("HEIC photos need the pillow-heif package, which is not installed.")
        return ReadResult(kind, read_image(data, kind))
    raise UploadRefused(f"The content is {describe_kind(kind)}, not a page image. Accepted: {ACCEPTED_KINDS}.")


def refuse_size(size, max_bytes=None):
    max_bytes = max_bytes or settings.OCR_MAX_UPLOAD_BYTES
    raise UploadRefused(
        f"The file is {_megabytes(size)}, over the {_megabytes(max_bytes)} limit per file; "
        "scan at 300 dpi or split it."
    )


def read_image(data, kind):
    """Decode a JPEG/PNG/TIFF/HEIC file (all frames of a multi-page TIFF) into pages."""
    max_pages = settings.OCR_MAX_PDF_PAGES
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data), formats=PILLOW_FORMATS[kind])
        except Image.DecompressionBombError as exc:
            raise UploadRefused(f"Refused as a decompression bomb: {exc}") from exc
        except Image.DecompressionBombWarning as exc:
            raise UploadRefused(f"Refused as a decompression bomb: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - any decoder failure on untrusted bytes is a refusal
            raise UploadRefused(
                f"The {kind.upper()} file is truncated or corrupt ({_reason(exc)}); upload it again."
            ) from exc
        with image:
            frames = getattr(image, "n_frames", 1) or 1
            if frames > max_pages:
                raise UploadRefused(f"The {kind.upper()} file has {frames} pages; the limit is {max_pages} per file.")
            pages = []
            for index in range(frames):
                if frames > 1:
                    image.seek(index)
                check_dimensions(*image.size)
                pages.append(_decode_frame(image, kind))
            return pages


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
            raise UploadRefused(f"Refused as a decompression bomb: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - truncated or corrupt pixel data
            raise UploadRefused(
                f"The {kind.upper()} file is truncated or corrupt ({_reason(exc)}); upload it again."
            ) from exc
    return DecodedPage(normalised, pixel_checksum(normalised), note)


def check_dimensions(width, height):
    """Refuse pages too large to decode safely or too small to be a page, before decoding them."""
    max_pixels, max_side, min_side = settings.OCR_MAX_PIXELS, settings.OCR_MAX_SIDE, settings.OCR_MIN_SIDE
    if width * height > max_pixels:
        raise UploadRefused(
            f"Refused as a decompression bomb: {width}×{height} is {width * height / 1e6:.0f} megapixels, "
            f"over the limit of {max_pixels / 1e6:.0f}."
        )
    if max(width, height) > max_side:
        raise UploadRefused(f"The image is {width}×{height} pixels; no side may exceed {max_side}.")
    if min(width, height) < min_side:
        raise UploadRefused(f"The image is {width}×{height} pixels, too small to be a page (at least {min_side}).")


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


def pixel_checksum(image):
    digest = hashlib.sha256(f"{image.mode}:{image.width}x{image.height}:".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()


def read_pdf(data):
    """Rasterise every page of a PDF with PDFium, within the page-count and pixel limits."""
    import pypdfium2 as pdfium  # imported here: only PDF uploads need PDFium

    max_pages = settings.OCR_MAX_PDF_PAGES
    dpi = settings.OCR_PDF_DPI
    with _PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            if "password" in str(exc).lower():
                raise UploadRefused(
                    "The PDF is encrypted with a password; save an unprotected copy and upload that."
                ) from exc
            raise UploadRefused(f"The PDF could not be opened ({_reason(exc)}).") from exc
        try:
            count = len(document)
            if count == 0:
                raise UploadRefused("The PDF has no pages.")
            if count > max_pages:
                raise UploadRefused(
                    f"The PDF has {count} pages; the limit is {max_pages} per file. Split it and upload the parts."
                )
            return [_render_pdf_page(document[index], dpi) for index in range(count)]
        finally:
            document.close()


def _render_pdf_page(page, dpi):
    try:
        width_pt, height_pt = page.get_size()
        scale = dpi / 72.0
        max_pixels, max_side = settings.OCR_MAX_PIXELS, settings.OCR_MAX_SIDE
        # A huge media box is rendered smaller rather than refused: the page itself is fine.
        scale = min(scale, max_side / max(width_pt, height_pt, 1.0))
        scale = min(scale, (max_pixels / max(width_pt * height_pt, 1.0)) ** 0.5)
        width, height = int(width_pt * scale), int(height_pt * scale)
        check_dimensions(max(width, 1), max(height, 1))
        image = page.render(scale=scale, grayscale=False, may_draw_forms=False).to_pil()
    except UploadRefused:
        raise
    except Exception as exc:  # noqa: BLE001 - PDFium errors on hostile content
        raise UploadRefused(f"A page of the PDF could not be rendered ({_reason(exc)}).") from exc
    finally:
        page.close()
    image = normalise_mode(image)
    return DecodedPage(image, pixel_checksum(image))


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
    binary: Image.Image  # L (0/255), thresholded, at work size: input of tesseract
    thumb: Image.Image
    skew_degrees: float
    work_to_display: float  # multiply work-image pixel coordinates by this to get screen pixels


def prepare_page(image, *, deskew=True):
    """Flatten, threshold and deskew a page; make the screen rendition and a thumbnail."""
    work_side, web_side, thumb_side = (
        settings.OCR_WORK_MAX_SIDE,
        settings.OCR_WEB_MAX_SIDE,
        settings.OCR_THUMB_MAX_SIDE,
    )
    colour = fit_within(image, work_side)
    # A 3x3 median removes sensor noise and dust specks without thinning pen strokes.
    gray = flatten_background(colour.convert("L")).filter(ImageFilter.MedianFilter(3))
    angle = estimate_skew(gray) if deskew else 0.0
    if angle:
        gray = gray.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
        fill = 255 if colour.mode == "L" else (255, 255, 255)
        colour = colour.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=fill)
    binary = sauvola_threshold(gray).filter(ImageFilter.MedianFilter(3))
    display = fit_within(colour, web_side)
    thumb = fit_within(colour, thumb_side)
    return PreparedPage(
        display=display,
        gray=gray,
        binary=binary,
        thumb=thumb,
        skew_degrees=angle,
        work_to_display=display.width / gray.width,
    )


def fit_within(image, max_side):
    """A copy scaled down (never up) so that its longer side is at most max_side."""
    longest = max(image.size)
    if longest <= max_side:
        return image.copy()
    scale = max_side / longest
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)


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
    array = np.asarray(gray, dtype=np.float64)
    if window is None:
        window = max(15, (min(array.shape) // 40) | 1)
    mean, std = _local_mean_std(array, window)
    threshold = mean * (1.0 + k * (std / dynamic_range - 1.0))
    binary = np.where(array > threshold, 255, 0).astype(np.uint8)
    return Image.fromarray(binary, "L")


def _local_mean_std(array, window):
    """Mean and standard deviation over a window around each pixel, by integral images."""
    half = window // 2
    padded = np.pad(array, half + 1, mode="edge")
    integral = padded.cumsum(0).cumsum(1)
    squares = (padded * padded).cumsum(0).cumsum(1)
    h, w = array.shape

    def box(table):
        return (
            table[window : window + h, window : window + w]
            - table[0:h, window : window + w]
            - table[window : window + h, 0:w]
            + table[0:h, 0:w]
        )

    area = float(window * window)
    mean = box(integral) / area
    variance = np.maximum(box(squares) / area - mean * mean, 0.0)
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
