"""Redaction regions: parts of a page (a name line, a student number) no OCR engine, vision model or
exported image may show.

A class PDF's template names them in page fractions, per page of a packet (docs/ocr.md)::

    "redact": [[0.55, 0.0, 1.0, 0.08]]                    every page of a packet
    "redact": {"1": [[0, 0, 1, 0.3]], "2": [[0.55, 0, 1, 0.08]]}   per page of a packet

A region is ``[x0, y0, x1, y1]`` with 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1, measured on the
upright form: (0, 0) is its top left corner. A page scanned a few degrees off is deskewed onto a
larger canvas (the rotated page and white corners), in whose middle the form sits upright, so the
same fractions of that canvas fall beside the form's name line (issue 40: 3 degrees moved a name
line out of its region and into the transcript). `deskewed_regions` gives each region in both
frames, on the form inside the canvas and at the same fractions of the canvas itself (what a
template measured on the screen's straightened page meant): both are blank in what an engine
reads, and both are hatched on the screens. The stored
scan is never changed; `black_out` fills the regions of a copy with one colour, and the OCR services
apply it to the image they hand to an engine (`ocr.services.runs.engine_input`, the one place) and
to the renditions that leave for people outside the review team (`ocr.services.runs.redacted_rendition`).

The template's regions are read and checked by `ocr.class_templates`; this module holds the pure
functions on Pillow images and plain data (no Django).
"""
from __future__ import annotations

import math

from PIL import Image, ImageColor, ImageDraw

# What a region is filled with. In an engine's input, the paper's white: tesseract reads nothing
# at all, not even the lines outside the region, on a thresholded page holding a black (or gray)
# block (measured on the tests' pages: an empty transcript), and a blank stretch of paper hides
# the name as well. In an image people get, black: the removal shows.
ENGINE_FILL = "white"
EXPORT_FILL = "black"


def black_out(image: Image.Image, regions, *, fill: str = EXPORT_FILL, align: int = 1) -> Image.Image:
    """A copy of `image` with every region (page fractions) filled with one colour (`fill`, a
    Pillow colour name); the image itself when there is none. Each region covers every pixel it
    touches (rounded outwards), and with `align` whole tiles of that many pixels (a JPEG's blocks)."""
    if not regions:
        return image
    copy = image.copy()
    draw = ImageDraw.Draw(copy)
    colour = ImageColor.getcolor(fill, copy.mode if copy.mode in ("L", "RGB", "RGBA") else "L")
    for left, top, right, bottom in pixel_boxes(copy.size, regions):
        if align > 1:
            left, top = left - left % align, top - top % align
            right = min(copy.width - 1, right - right % align + align - 1)
            bottom = min(copy.height - 1, bottom - bottom % align + align - 1)
        draw.rectangle((left, top, right, bottom), fill=colour)
    return copy


def pixel_boxes(size, regions) -> list[tuple[int, int, int, int]]:
    """The regions in pixels of an image of `size` (width, height): inclusive (x0, y0, x1, y1)."""
    width, height = size
    boxes = []
    for x0, y0, x1, y1 in regions:
        left, top = math.floor(x0 * width), math.floor(y0 * height)
        right, bottom = min(width, math.ceil(x1 * width)) - 1, min(height, math.ceil(y1 * height)) - 1
        if right >= left and bottom >= top:
            boxes.append((left, top, right, bottom))
    return boxes


def regions_for(template: dict | None, index_in_file: int) -> list[list[float]]:
    """The regions of the page at `index_in_file` (from 0) of a class PDF, from its stored template
    (``{"pages_per_student": K, "redact": {"1": [...], ...}}``); [] without any."""
    if not template:
        return []
    per_page = template.get("redact") or {}
    count = template.get("pages_per_student") or 0
    if not per_page or not count:
        return []
    return list(per_page.get(str(index_in_file % count + 1), []))


def rotated_size(size, angle) -> tuple[float, float]:
    """The size of the canvas that holds a page of `size` rotated `angle` degrees whole (as
    Image.rotate with expand=True and imaging.rotate_expand make it)."""
    width, height = size
    cos, sin = abs(math.cos(math.radians(angle))), abs(math.sin(math.radians(angle)))
    return width * cos + height * sin, width * sin + height * cos


def on_canvas(regions, form_size, canvas_size) -> list[list[float]]:
    """Regions of the upright form (fractions of `form_size`) as fractions of a canvas of
    `canvas_size` in whose middle the form sits (a deskewed page), clipped to the canvas."""
    form_width, form_height = form_size
    width, height = canvas_size
    left, top = (width - form_width) / 2, (height - form_height) / 2
    boxes = []
    for x0, y0, x1, y1 in regions:
        box = [min(1.0, max(0.0, (left + x0 * form_width) / width)), min(1.0, max(0.0, (top + y0 * form_height) / height)),
               min(1.0, max(0.0, (left + x1 * form_width) / width)), min(1.0, max(0.0, (top + y1 * form_height) / height))]
        if box[0] < box[2] and box[1] < box[3]:
            boxes.append(box)
    return boxes


def deskewed_regions(regions, form_size, angle, canvas_size=None) -> list[list[float]]:
    """The regions to blank (and hatch) on a deskewed page, as fractions of it: each region on the
    upright form inside the canvas, and each at the same fractions of the canvas itself. The page
    was `form_size` before its deskew rotation by `angle` degrees; `canvas_size` is the deskewed
    image's size (else computed). Without a rotation the two frames are one: the regions as given."""
    regions = [list(region) for region in regions or ()]
    if not regions or not angle or not form_size:
        return regions
    canvas_size = canvas_size or rotated_size(form_size, angle)
    return regions + [box for box in on_canvas(regions, form_size, canvas_size) if box not in regions]


def scan_regions(regions, size, angle) -> list[list[float]]:
    """The regions (fractions of the upright form) on the scan as uploaded, which holds the form
    turned `angle` degrees off: for each region, the box that holds it turned either way (and the
    region itself), as fractions of `size`. Generous on purpose: for images people outside the
    review team get, where a few more blank pixels cost nothing."""
    regions = [list(region) for region in regions or ()]
    if not regions or not angle:
        return regions
    width, height = size
    boxes = list(regions)
    for sign in (1, -1):
        cos, sin = math.cos(math.radians(sign * angle)), math.sin(math.radians(sign * angle))
        for x0, y0, x1, y1 in regions:
            xs, ys = [], []
            for x, y in ((x0, y0), (x1, y0), (x0, y1), (x1, y1)):
                dx, dy = (x - 0.5) * width, (y - 0.5) * height
                xs.append((width / 2 + dx * cos - dy * sin) / width)
                ys.append((height / 2 + dx * sin + dy * cos) / height)
            box = [max(0.0, min(xs)), max(0.0, min(ys)), min(1.0, max(xs)), min(1.0, max(ys))]
            if box[0] < box[2] and box[1] < box[3] and box not in boxes:
                boxes.append(box)
    return boxes
