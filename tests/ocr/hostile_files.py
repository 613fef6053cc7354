"""Hostile and awkward uploads, built in memory: each with what the batch should say about it."""
import io
import struct
import zipfile
import zlib
from dataclasses import dataclass

from PIL import Image

from .conftest import distinct_image, jpeg_bytes, png_bytes


@dataclass
class Case:
    name: str
    data: bytes
    declared_type: str
    status: str  # accepted / refused / duplicate
    phrase: str  # words the message must contain (case-insensitive)


def _chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def png_header_only(width, height):
    """A tiny PNG file that claims huge dimensions (a decompression bomb needs no real pixels)."""
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(b"\x00" * 4096))
        + _chunk(b"IEND", b"")
    )


def _pdf_file(objects, trailer_extra=b""):
    """A PDF file of the numbered objects (the first is the catalogue), with its cross-reference table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R".encode() + trailer_extra + b" >>\n")
    out.write(f"startxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def pdf_document(pages, encrypt=False):
    """A hand-written PDF with `pages` empty A4 pages; with encrypt, it demands a password."""
    kids = " ".join(f"{3 + i} 0 R" for i in range(pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode()]
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>"] * pages
    trailer_extra = b""
    if encrypt:
        objects.append(b"<< /Filter /Standard /V 1 /R 2 /O <" + b"11" * 32 + b"> /U <" + b"22" * 32 + b"> /P -4 >>")
        trailer_extra = f" /Encrypt {len(objects)} 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]".encode()
    return _pdf_file(objects, trailer_extra)


def pdf_giant_pages(pages, side=14400, height=None):
    """A small PDF whose `pages` pages each have a side x height pt media box (14400 pt is 5 m) and
    a black square at a different place on each, so no two pages have the same pixels."""
    height = height or side
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode()]
    for i in range(pages):
        square = max(1, min(side, height) // 10)
        stream = f"0 0 0 rg {(i * square // 3) % max(1, side - square)} {height // 2} {square} {max(1, square // 2)} re f".encode()
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {side} {height}] /Contents {4 + 2 * i} 0 R >>".encode())
        objects.append(f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream")
    return _pdf_file(objects)


def pdf_of_images(images):
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", save_all=True, append_images=images[1:], resolution=100)
    return buffer.getvalue()


def multi_frame_tiff(frames):
    images = [distinct_image(9000 + i, (40, 40)) for i in range(frames)]
    buffer = io.BytesIO()
    images[0].save(buffer, "TIFF", save_all=True, append_images=images[1:])
    return buffer.getvalue()


def corrupt_png_crc(data):
    """Flip a byte inside the IDAT data so that its CRC no longer matches."""
    at = data.index(b"IDAT") + 6
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


def jpeg_with_bad_exif(image):
    """A JPEG whose EXIF block is garbage after a valid header."""
    data = jpeg_bytes(image)
    exif = b"Exif\x00\x00" + b"MM\x00*\x00\x00\x00\x08" + b"\xff" * 40
    segment = b"\xff\xe1" + struct.pack(">H", len(exif) + 2) + exif
    return data[:2] + segment + data[2:]


def zip_archive():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("page.png", png_bytes(distinct_image(1)))
    return buffer.getvalue()


def hostile_cases(stored_duplicate_png):
    """At least twenty uploads that must be refused (or handled) with a clear message each."""
    good_jpeg = jpeg_bytes(distinct_image(101))
    good_png = png_bytes(distinct_image(102))
    cmyk = io.BytesIO()
    Image.new("CMYK", (130, 90), (0, 0, 0, 200)).save(cmyk, "JPEG")
    sixteen = io.BytesIO()
    Image.new("I;16", (120, 90), 40000).save(sixteen, "PNG")
    palette = Image.new("P", (120, 90), 0)
    palette.putpalette([255, 255, 255, 0, 0, 0] + [0] * 762)
    palette.paste(1, (10, 10, 40, 30))
    palette.info["transparency"] = 0
    return [
        Case("empty_3-17_1.jpg", b"", "image/jpeg", "refused", "empty (0 bytes)"),
        Case("truncated_3-17_1.jpg", good_jpeg[: len(good_jpeg) // 2], "image/jpeg", "refused", "truncated or corrupt"),
        Case("truncated_3-17_2.png", good_png[: len(good_png) // 2], "image/png", "refused", "truncated or corrupt"),
        Case("badcrc_3-17_3.png", corrupt_png_crc(good_png), "image/png", "refused", "truncated or corrupt"),
        Case("notes_3-17_1.jpg", b"This is a plain text file, not a scan.\n" * 20, "image/jpeg", "refused",
             "plain text"),
        Case("drawing_3-17_1.svg", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
             "image/svg+xml", "refused", "SVG"),
        Case("sneaky_3-17_1.png", b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
             "image/png", "refused", "SVG"),
        Case("page_3-17_1.html", b"<!doctype html><html><script>alert(1)</script></html>", "text/html", "refused",
             "HTML"),
        Case("wrongmime_3-17_1.jpg", b"<html><body>not a jpeg</body></html>", "image/jpeg", "refused", "HTML"),
        Case("bomb_3-17_1.png", png_header_only(40_000, 40_000), "image/png", "refused", "decompression bomb"),
        Case("bomb2_3-17_1.png", png_header_only(9_000, 9_000), "image/png", "refused", "decompression bomb"),
        Case("wide_3-17_1.png", png_header_only(25_000, 40), "image/png", "refused", "no side may exceed"),
        Case("tiny_3-17_1.png", png_bytes(Image.new("L", (8, 8), 255)), "image/png", "refused", "too small"),
        Case("locked_3-17.pdf", pdf_document(1, encrypt=True), "application/pdf", "refused", "encrypted"),
        Case("thousand_3-17.pdf", pdf_document(1000), "application/pdf", "refused", "1000 pages"),
        Case("broken_3-17.pdf", b"%PDF-1.4\n1 0 obj garbage", "application/pdf", "refused", "could not be opened"),
        Case("program_3-17_1.png", b"MZ\x90\x00" + bytes(range(256)) * 4, "application/x-msdownload", "refused",
             "Windows program"),
        Case("binary_3-17_1.tiff", b"\x7fELF\x02\x01\x01" + bytes(300), "image/tiff", "refused", "Linux program"),
        Case("archive_3-17.pdf", zip_archive(), "application/pdf", "refused", "ZIP"),
        Case("anim_3-17_1.gif", b"GIF89a" + bytes(200), "image/gif", "refused", "GIF"),
        Case("script_3-17_1.eps", b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n", "image/jpeg", "refused",
             "PostScript"),
        Case("frames_3-17.tiff", multi_frame_tiff(60), "image/tiff", "refused", "60 pages"),
        Case("random_3-17_1.jpg", bytes((i * 37 + 11) % 256 for i in range(2000)), "image/jpeg", "refused",
             "not a page image"),
        Case("again_3-17_1.png", stored_duplicate_png, "image/png", "duplicate", "already stored"),
        # Awkward but readable: accepted, with a note where something was odd.
        Case("exif_3-18_1.jpg", jpeg_with_bad_exif(distinct_image(103)), "image/jpeg", "accepted", ""),
        Case("octet_3-18_2.bin", png_bytes(distinct_image(104)), "application/octet-stream", "accepted",
             "content is PNG"),
        Case("cmyk_3-18_3.jpg", cmyk.getvalue(), "image/jpeg", "accepted", ""),
        Case("deep_3-18_4.png", sixteen.getvalue(), "image/png", "accepted", ""),
        Case("palette_3-18_5.png", png_bytes(palette), "image/png", "accepted", ""),
        Case("../../../etc/passwd_3-18_6.png", png_bytes(distinct_image(105)), "image/png", "accepted", ""),
    ]
