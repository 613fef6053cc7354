"""Token counts before a request is sent: what the rate limiter reserves and what a run's cost
estimate counts. One function for both (`count_messages`), so the two never disagree.

The rule, per model name (a provider prefix such as ``openai/`` and a fine-tune's ``ft:`` are
ignored):

- **tiktoken**, for the models OpenAI documents as using one of its encodings: ``o200k_base``
  for gpt-4o*, chatgpt-4o*, gpt-4.1*, gpt-4.5*, o1*, o3*, o4*, gpt-5*; ``cl100k_base`` for gpt-4
  (other than the above), gpt-3.5*, gpt-35*, text-embedding-3-* and text-embedding-ada-002. The
  count is exact for the text. The encoding files ship with the code (`llm/encodings/`, with
  tiktoken's MIT licence): byte-identical to the files OpenAI publishes for tiktoken (their
  SHA-256 is the one tiktoken pins, checked on every load), so nothing is ever fetched. Loading
  one costs about 0.8 s and 60 MB once per process, on first use.
- **a per-character estimate** for every other model (local and open models, whose tokenizers
  are not shipped here): each CJK character (Han, kana, Hangul, CJK punctuation, full-width
  forms) counts 1 token, every other character a quarter of a token (about 4 characters a
  token, as for English text and LaTeX), rounded up per message. Also used if tiktoken cannot
  be imported.
- **per message**: 3 tokens of chat framing per message (1 more for a ``name``), and 3 for the
  reply's start, as OpenAI's chat format counts them. An image part of a message counts
  765 tokens (one 1024 x 1024 image at high detail), never the length of its base64 data.

`estimate_request` adds the reserve the limiter holds for the answer, min(max_tokens or 512,
1024), until the answer's ``usage`` settles the real count.

Pure: no Django and no project app.
"""
from __future__ import annotations

import base64
import hashlib
import math
import re
import threading
from pathlib import Path

ENCODINGS_DIR = Path(__file__).resolve().parent / "encodings"

TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
TOKENS_PER_REPLY = 3
TOKENS_PER_IMAGE = 765
CHARS_PER_TOKEN = 4
DEFAULT_REPLY_RESERVE = 512
MAX_REPLY_RESERVE = 1024

PER_CHARACTER = "per-character"

# The patterns and special tokens of tiktoken's own constructors (tiktoken_ext.openai_public;
# tests/test_tokens.py checks they are still tiktoken's), with the SHA-256 tiktoken pins.
_O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
ENCODINGS = {
    "o200k_base": {
        "file": "o200k_base.tiktoken",
        "sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "pat_str": _O200K_PATTERN,
        "special_tokens": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    },
    "cl100k_base": {
        "file": "cl100k_base.tiktoken",
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "pat_str": _CL100K_PATTERN,
        "special_tokens": {
            "<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276,
        },
    },
}

# (exact names, name prefixes) per encoding; the first match wins, so gpt-4o is tried before gpt-4.
_MODELS = (
    ("o200k_base", ("o1", "o3", "o4", "gpt-5", "gpt-4o", "gpt-4.1", "gpt-4.5", "chatgpt-4o"),
     ("o1-", "o3-", "o4-", "gpt-5", "gpt-4o", "gpt-4.1", "gpt-4.5", "chatgpt-4o")),
    ("cl100k_base", ("gpt-4", "gpt-3.5", "gpt-3.5-turbo", "gpt-35-turbo", "text-embedding-ada-002"),
     ("gpt-4-", "gpt-3.5-", "gpt-35-", "text-embedding-3-")),
)

_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x31FF),  # Bopomofo, Hangul compatibility Jamo, Kanbun, Katakana extensions
    (0x3200, 0x4DBF),  # enclosed CJK, CJK compatibility, extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, Jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFE30, 0xFE4F),  # CJK compatibility forms
    (0xFF00, 0xFFEF),  # half-width and full-width forms
    (0x20000, 0x3FFFF),  # extensions B and later
)

_CJK = re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in _CJK_RANGES) + "]")

_loaded = {}
_lock = threading.Lock()


class EncodingUnavailable(Exception):
    """A shipped encoding file is missing or not the one tiktoken pins (the message says which)."""


def encoding_name(model: str) -> str | None:
    """The tiktoken encoding `model` is known to use, or None (then the per-character estimate)."""
    name = (model or "").strip().lower()
    name = name.rsplit("/", 1)[-1]
    if name.startswith("ft:"):
        name = name[3:]
    for encoding, exact, prefixes in _MODELS:
        if name in exact or name.startswith(prefixes):
            return encoding
    return None


def _tiktoken_encoding(name):
    """The tiktoken Encoding `name`, built once per process from the shipped file (None when
    tiktoken cannot be imported)."""
    with _lock:
        if name in _loaded:
            return _loaded[name]
        try:
            import tiktoken  # imported here: only processes that count tokens of OpenAI models load it
        except ImportError:
            _loaded[name] = None
            return None
        spec = ENCODINGS[name]
        path = ENCODINGS_DIR / spec["file"]
        try:
            contents = path.read_bytes()
        except OSError as exc:
            raise EncodingUnavailable(f"The encoding file {path} cannot be read ({exc}).") from exc
        if hashlib.sha256(contents).hexdigest() != spec["sha256"]:
            raise EncodingUnavailable(f"The encoding file {path} is not the {name} file tiktoken pins (SHA-256 differs).")
        ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in contents.splitlines() if line)}
        encoding = tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=ranks,
                                     special_tokens=spec["special_tokens"])
        _loaded[name] = encoding
        return encoding


def method(model: str) -> str:
    """How `model`'s tokens are counted: "tiktoken o200k_base", "tiktoken cl100k_base" or
    "per-character"."""
    name = encoding_name(model)
    if name is None or _tiktoken_encoding(name) is None:
        return PER_CHARACTER
    return f"tiktoken {name}"


def is_cjk(char: str) -> bool:
    point = ord(char)
    return any(low <= point <= high for low, high in _CJK_RANGES)


def estimate_text(text: str) -> int:
    """The per-character estimate of `text`: CJK characters 1 token each, others 4 a token, rounded up."""
    if not text:
        return 0
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / CHARS_PER_TOKEN)


def count_text(text: str, model: str = "") -> int:
    """Tokens of `text` for `model` (tiktoken where known, else the per-character estimate)."""
    if not text:
        return 0
    name = encoding_name(model)
    encoding = _tiktoken_encoding(name) if name else None
    if encoding is None:
        return estimate_text(text)
    return len(encoding.encode_ordinary(text))


def _content_tokens(content, model):
    if content is None:
        return 0
    if isinstance(content, str):
        return count_text(content, model)
    if isinstance(content, list):  # parts: {"type": "text", "text": ...} and images
        total = 0
        for part in content:
            if isinstance(part, dict) and part.get("type") in ("image_url", "input_image", "image"):
                total += TOKENS_PER_IMAGE
            elif isinstance(part, dict):
                total += count_text(str(part.get("text", "")), model)
            else:
                total += count_text(str(part), model)
        return total
    return count_text(str(content), model)


def count_messages(messages, model: str = "") -> int:
    """Prompt tokens of a chat request: each message's content and framing, and the reply's start."""
    total = TOKENS_PER_REPLY
    for message in messages or ():
        total += TOKENS_PER_MESSAGE + _content_tokens(message.get("content"), model)
        if message.get("name"):
            total += TOKENS_PER_NAME + count_text(str(message["name"]), model)
    return total


def reply_reserve(max_tokens: int | None) -> int:
    """What the limiter holds for the answer before its usage is known."""
    return min(max_tokens or DEFAULT_REPLY_RESERVE, MAX_REPLY_RESERVE)


def estimate_request(messages, max_tokens: int | None, model: str = "") -> int:
    """The tokens the limiter reserves for one chat request: the prompt and the answer's reserve."""
    return count_messages(messages, model) + reply_reserve(max_tokens)
