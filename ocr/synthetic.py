"""Exam-style page images rendered from known text, for tests, the benchmark and demos.

A page is lines of Chinese with inline formulas in a CJK font from Debian's fonts-noto-cjk,
optionally spoiled the way phone photos and scanners spoil pages: uneven light, noise, specks,
a small rotation and JPEG compression. The text it was rendered from is the ground truth.
"""
import io
import random
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT_CANDIDATES = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
    "/usr/share/fonts/truetype/noto/NotoSansCJK-Regular.ttc",
)

EXAM_LINES = (
    "解：由题意得 f(x)=x^2+2x+1",
    "所以 f(1)=4，故答案为 4。",
    "证明：设数列 a_n 的公差为 d",
    "则 a_5=a_1+4d=13，解得 d=3",
    "因为 sin A=3/5，所以 cos A=4/5",
    "当 x>0 时，f'(x)>0，函数单调递增",
    "椭圆的离心率 e=c/a=1/2",
    "综上所述，实数 m 的取值范围是 m<2",
    "由余弦定理得 b^2=a^2+c^2-2ac cos B",
    "所以 S_n=n(n+1)/2，得证。",
    "令 g(x)=ln x-x+1，则 g(1)=0",
    "故直线 l 的方程为 y=2x-3",
)


def font_path():
    for candidate in FONT_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    raise FileNotFoundError("No CJK font found; install Debian's fonts-noto-cjk.")


def page_lines(seed, count=4):
    """A deterministic choice of exam lines for page number `seed`."""
    rng = random.Random(seed)
    return rng.sample(EXAM_LINES, count)


def render_page(lines, *, width=1000, font_size=34, margin=50, line_gap=30, rotate=0.0, noise=0.0,
                shading=0.0, specks=0, jpeg_quality=None, seed=0):
    """Render lines of text as a page image (mode L, or RGB after JPEG) and spoil it on request."""
    font = ImageFont.truetype(font_path(), font_size)
    height = margin * 2 + len(lines) * (font_size + line_gap)
    image = Image.new("L", (width, height), 250)
    draw = ImageDraw.Draw(image)
    for index, line in enumerate(lines):
        draw.text((margin, margin + index * (font_size + line_gap)), line, fill=25, font=font)
    rng = np.random.default_rng(seed)
    array = np.asarray(image, dtype=np.float32)
    if shading:
        # Light falling off towards one corner, as under a desk lamp.
        ys, xs = np.mgrid[0:height, 0:width]
        array = array * (1.0 - shading * (xs / width * 0.6 + ys / height * 0.4))
    if noise:
        array = array + rng.normal(0.0, noise, array.shape)
    if specks:
        ys = rng.integers(0, height, specks)
        xs = rng.integers(0, width, specks)
        array[ys, xs] = 0
    image = Image.fromarray(np.clip(array, 0, 255).astype(np.uint8), "L")
    if rotate:
        image = image.rotate(rotate, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=250)
    if jpeg_quality:
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, "JPEG", quality=jpeg_quality)
        image = Image.open(io.BytesIO(buffer.getvalue()))
        image.load()
    return image


def spoiled_page(seed, **overrides):
    """A noisy, shaded, slightly rotated exam page and its ground-truth text."""
    lines = page_lines(seed)
    options = {"rotate": 2.5 if seed % 2 else -2.0, "noise": 12.0, "shading": 0.35, "specks": 300,
               "jpeg_quality": 70, "seed": seed}
    options.update(overrides)
    return render_page(lines, **options), "\n".join(lines)


def full_page(seed, **overrides):
    """A spoiled page the size of a 200-dpi A4 scan (about 1,650 x 2,100 px, 12 lines) and its text."""
    lines = page_lines(seed, len(EXAM_LINES))
    options = {"width": 1654, "font_size": 44, "margin": 120, "line_gap": 110, "rotate": 1.5 if seed % 2 else -1.8,
               "noise": 12.0, "shading": 0.35, "specks": 900, "jpeg_quality": 75, "seed": seed}
    options.update(overrides)
    return render_page(lines, **options), "\n".join(lines)
