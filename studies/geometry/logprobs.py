"""The prompt's tokens and log-probabilities, read from the two answer shapes of /v1/completions
(pure Python, no Django): what stats.transition_figures needs.

- **echo** (the OpenAI legacy form; vLLM, llama.cpp and others give it): the request has
  ``echo: true, logprobs: k``; ``choices[0].logprobs`` holds ``tokens``, ``token_logprobs`` (the
  first is null), ``top_logprobs`` (per position ``{token text: logprob}``, up to k + 1 entries:
  the token itself is added when it is not among the k best) and ``text_offset``; the generated
  token(s) follow the prompt's.
- **prompt_logprobs** (vLLM's extension): the request has ``prompt_logprobs: k``;
  ``choices[0].prompt_logprobs`` is a list with one entry per prompt token: null for the first,
  then ``{token id: {"logprob", "rank", "decoded_token"}}``, whose *first* key is the prompt's
  own token (vLLM builds each entry from the prompt token, then the k best, in that order; JSON
  keeps the order), with its rank in the whole vocabulary; the k best have ranks 1..k. The
  first token's text is not given: it is what the other tokens leave of the prompt's start
  (nothing when it is a special token such as <s>).

Servers decode each token on its own, so a character split over several byte-level tokens comes
back as U+FFFD pieces and the texts do not spell the prompt; `align` then places each piece by
letting every U+FFFD stand for at most one non-ASCII character. A reply that cannot be placed
on the prompt is refused (`ShapeError`), never guessed.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

REPLACEMENT = "\ufffd"
MAX_ALIGNED_PIECES = 20_000


class ShapeError(ValueError):
    """The reply holds no usable prompt log-probabilities."""


@dataclass(frozen=True)
class PromptTokens:
    """The prompt's tokens: text, log-probability (None for the first), top-k dict, first character."""

    tokens: list
    token_logprobs: list
    top_logprobs: list
    offsets: list


def _pattern(pieces) -> str:
    return "".join(
        "(" + "".join("[^\\x00-\\x7f]?" if char == REPLACEMENT else re.escape(char) for char in piece) + ")"
        for piece in pieces
    )


def _running(start: int, pieces) -> list[int]:
    """Each piece's first character when the pieces follow each other from `start`."""
    offsets = []
    for piece in pieces:
        offsets.append(start)
        start += len(piece)
    return offsets


def align(prompt: str, pieces: list[str]) -> list[int] | None:
    """Each piece's first character in `prompt` when the pieces spell it (U+FFFD standing for at
    most one non-ASCII character each: a character cut over several tokens), else None."""
    if "".join(pieces) == prompt:
        return _running(0, pieces)
    if len(pieces) > MAX_ALIGNED_PIECES or not any(REPLACEMENT in piece for piece in pieces):
        return None
    match = re.fullmatch(_pattern(pieces), prompt, flags=re.DOTALL)
    return None if match is None else [match.start(i + 1) for i in range(len(pieces))]


def align_after_first(prompt: str, pieces: list[str]) -> list[int] | None:
    """Offsets of the tokens after the first (whose text is not given) when they spell the end of
    `prompt` (what they leave of its start is the first token's text), else None."""
    rest = "".join(pieces)
    if rest and prompt.endswith(rest):  # the first may be a special token outside the text (<s>): ""
        return _running(len(prompt) - len(rest), pieces)
    if len(pieces) > MAX_ALIGNED_PIECES or not any(REPLACEMENT in piece for piece in pieces):
        return None
    match = re.fullmatch("(.*?)" + _pattern(pieces), prompt, flags=re.DOTALL)
    return None if match is None else [match.start(i + 2) for i in range(len(pieces))]


def _finite(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def from_echo(logprobs, prompt: str, prompt_tokens: int | None = None) -> PromptTokens:
    """The prompt's part of an echoed ``logprobs`` object (attributes or a dict). The prompt's
    tokens are the first `prompt_tokens` (the reply's usage) when given, else those that spell
    the prompt; the generated ones follow and are dropped."""
    get = (lambda key: logprobs.get(key)) if isinstance(logprobs, dict) else (lambda key: getattr(logprobs, key, None))
    tokens = list(get("tokens") or [])
    if not tokens:
        raise ShapeError("no echoed prompt tokens (the endpoint needs echo and logprobs)")
    values = list(get("token_logprobs") or [])
    tops = list(get("top_logprobs") or [])
    values += [None] * (len(tokens) - len(values))
    tops += [None] * (len(tokens) - len(tops))
    if prompt_tokens is not None and 0 < prompt_tokens <= len(tokens):
        count = prompt_tokens
    else:
        count, spelled = 0, 0
        while count < len(tokens) and spelled < len(prompt):
            spelled += len(tokens[count])
            count += 1
    tokens = tokens[:count]
    placed = align(prompt, tokens)  # the server's text_offset is not trusted: byte pieces shift it
    if placed is None and len(tokens) > 1:
        rest = align(prompt, tokens[1:])  # a leading special token (<s>) that is not in the text
        if rest is not None:
            tokens, placed = ["", *tokens[1:]], [0, *rest]
    if placed is None:
        raise ShapeError("the echoed tokens do not spell the prompt")
    return PromptTokens(tokens, [_finite(v) for v in values[:count]],
                        [dict(t) if isinstance(t, dict) else None for t in tops[:count]], placed)


def from_prompt_logprobs(entries, prompt: str) -> PromptTokens:
    """vLLM's ``prompt_logprobs`` list (see the module's docstring) as the prompt's tokens; each
    position's dict holds every entry (the prompt's own token and the k best: transition_figures
    keeps the k largest, which are the k best)."""
    if not isinstance(entries, list) or len(entries) < 2:
        raise ShapeError("no prompt_logprobs (the endpoint needs vLLM's prompt_logprobs)")
    pieces, values, tops = [], [], []
    for entry in entries[1:]:
        if not isinstance(entry, dict) or not entry or not all(isinstance(row, dict) for row in entry.values()):
            raise ShapeError("a prompt_logprobs entry is not {token id: {logprob, rank, decoded_token}}")
        rows = list(entry.values())
        own = rows[0]  # vLLM puts the prompt's own token first
        if not isinstance(own.get("decoded_token"), str):
            raise ShapeError("prompt_logprobs without decoded_token (the server must detokenize)")
        pieces.append(own["decoded_token"])
        values.append(_finite(own.get("logprob")))
        best = {}
        for row in rows:
            value, text = _finite(row.get("logprob")), row.get("decoded_token")
            if value is not None and isinstance(text, str):
                best[text] = max(value, best.get(text, value))
        tops.append(best)
    offsets = align_after_first(prompt, pieces)
    if offsets is None:
        raise ShapeError("the prompt_logprobs tokens do not spell the prompt")
    return PromptTokens([prompt[:offsets[0]], *pieces], [None, *values], [None, *tops], [0, *offsets])


def read(choice, prompt: str, prompt_tokens: int | None = None) -> PromptTokens:
    """The prompt's tokens from a completion choice (attributes or a dict): vLLM's
    ``prompt_logprobs`` when it is there, else the echoed ``logprobs``. Raises ShapeError."""
    get = (lambda key: choice.get(key)) if isinstance(choice, dict) else (lambda key: getattr(choice, key, None))
    entries = get("prompt_logprobs")
    if entries:
        return from_prompt_logprobs(list(entries), prompt)
    logprobs = get("logprobs")
    if logprobs is None:
        raise ShapeError("the endpoint returned no prompt log-probabilities (it needs echo and logprobs, "
                         "or vLLM's prompt_logprobs)")
    return from_echo(logprobs, prompt, prompt_tokens)
