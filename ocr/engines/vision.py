"""An OpenAI-compatible vision model: page image in, Markdown with LaTeX out.

The endpoint comes from settings (OCR_VISION_BASE_URL, else OPENAI_BASE_URL) and the key from
the environment variable that OCR_VISION_API_KEY_ENV names; neither is stored in the database.
Both pass the LLM transport's allow-lists (llm.access): the variable must be an allowed key
variable and the host an allowed LLM host, and the answer is cut to REALMATH_LLM_MAX_OUTPUT_CHARS.
A chat model gives no positions, so tokens carry no boxes; when the server returns log
probabilities, each token's probability is its confidence.
"""
import base64
import math
import re
from urllib.parse import urlparse

from django.conf import settings
from django.utils.translation import gettext, gettext_lazy

import llm
from llm import access

from ..imaging import encode_jpeg
from .base import EngineFailed, EngineResult, EngineUnavailable, OcrEngine, Token

PROMPT = (
    "This is a scanned page of a student's handwritten answer to a Chinese high-school math exam. "
    "Transcribe it exactly as written, mistakes included; do not solve, correct or summarise. "
    "Keep the student's line breaks. Write every formula in LaTeX between single dollar signs, "
    "e.g. $a_{n}=2n-1$. Reply with the transcription only, as Markdown."
)
_FENCE = re.compile(r"^```[a-zA-Z]*\n(.*?)\n```\s*$", re.S)


class VisionEngine(OcrEngine):
    name = "vision"
    label = gettext_lazy("Vision model (OpenAI-compatible)")
    input_kind = "display"

    def _settings(self):
        base_url = settings.OCR_VISION_BASE_URL or settings.OPENAI_BASE_URL
        return base_url, settings.OCR_VISION_MODEL, settings.OCR_VISION_API_KEY_ENV

    def availability(self):
        base_url, model, key_env = self._settings()
        if not base_url:
            return gettext("No endpoint: set OCR_VISION_BASE_URL (or OPENAI_BASE_URL) to an OpenAI-compatible /v1 URL.")
        if not model:
            return gettext("No model: set OCR_VISION_MODEL to the name of a vision model the endpoint serves.")
        problem = access.url_problem(base_url)
        if problem:
            return gettext("Vision endpoint refused: %(problem)s") % {"problem": problem}
        try:
            llm.read_api_key(key_env)
        except llm.MissingApiKey:
            return gettext("No API key: the environment variable %(key_env)s is empty.") % {"key_env": key_env}
        except llm.EndpointUnusable as exc:
            return f"No API key: {exc}"
        return None

    def version(self):
        base_url, model, _ = self._settings()
        return f"{model} at {urlparse(base_url).netloc or base_url}"

    def recognise(self, image):
        import openai  # imported here: ~2 s, only this engine needs it

        problem = self.availability()
        if problem:
            raise EngineUnavailable(problem)
        base_url, model, key_env = self._settings()
        # No retries of the SDK's (they sleep out a Retry-After that neither a cancel nor a worker's
        # shutdown can wake): `llm.retrying` retries with the transport's rules, every wait through
        # llm.cancel.pause, nothing sent after a shutdown (llm.CallCancelled, raised through).
        client = openai.OpenAI(
            base_url=base_url, api_key=llm.read_api_key(key_env), timeout=settings.OCR_ENGINE_TIMEOUT,
            max_retries=0, http_client=llm.bounded_http_client(),
        )
        data_url = "data:image/jpeg;base64," + base64.b64encode(encode_jpeg(image, quality=90)).decode("ascii")

        def request():
            completion = client.chat.completions.create(
                model=model,
                temperature=0,
                max_tokens=settings.OCR_VISION_MAX_TOKENS,
                logprobs=True,
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": PROMPT},
                            {"type": "image_url", "image_url": {"url": data_url}},
                        ],
                    }
                ],
            )
            return llm.first_choice(completion)  # a body that is no chat completion is retried, as the transport does

        try:
            # OCR_VISION_MAX_RETRIES attempts after the first; the waits in all within
            # OCR_ENGINE_TIMEOUT, so a page stays within the time its watchdog allows it.
            choice = llm.retrying(request, retries=settings.OCR_VISION_MAX_RETRIES,
                                      max_wait=float(settings.OCR_ENGINE_TIMEOUT))
        except openai.APIStatusError as exc:
            moved = llm.redirect_problem(exc)  # redirects are never followed (llm.bounded_http_client)
            if moved:
                raise EngineFailed(gettext("the vision endpoint %(moved)s") % {"moved": moved}) from exc
            raise EngineFailed(gettext("the vision endpoint refused the page: %(error)s") % {"error": exc}) from exc
        except openai.APITimeoutError as exc:
            cause = f" ({exc.__cause__})" if exc.__cause__ is not None and str(exc.__cause__) else ""
            raise EngineFailed(gettext("the vision endpoint did not answer in time: %(error)s") % {"error": f"{exc}{cause}"}) from exc
        except openai.APIError as exc:
            raise EngineFailed(gettext("the vision endpoint refused the page: %(error)s") % {"error": exc}) from exc
        except llm.ReplyTooLarge as exc:
            raise EngineFailed(gettext("the vision endpoint's answer was not read: %(error)s") % {"error": exc}) from exc
        except ValueError as exc:  # a body that is not JSON
            raise EngineFailed(gettext("the vision endpoint's answer is not a chat completion: %(error)s")
                               % {"error": exc}) from exc
        except llm.BadResponse as exc:  # JSON, but no chat completion (after the retries)
            raise EngineFailed(gettext("the vision endpoint's answer is unreadable: %(error)s") % {"error": exc}) from exc
        if choice.message.content is None:
            raise EngineFailed(gettext("the vision endpoint returned no text"))
        content, cut_from = access.cap_output(choice.message.content)
        text = unfence(content)
        tokens = [] if cut_from else logprob_tokens(choice, content, text)  # offsets do not survive a cut
        return EngineResult(text, tokens)


def unfence(content):
    """Drop a Markdown code fence that some models wrap their whole answer in."""
    match = _FENCE.match(content.strip())
    return match.group(1) if match else content.strip()


def logprob_tokens(choice, content, text):
    """Tokens with confidences from log probabilities, when the server sent them."""
    items = getattr(getattr(choice, "logprobs", None), "content", None) or []
    shift = content.find(text)
    if not items or shift < 0:
        return []
    tokens, cursor = [], -shift
    for item in items:
        piece = item.token or ""
        start, cursor = cursor, cursor + len(piece)
        if start < 0 or cursor > len(text) or not piece.strip():
            continue
        tokens.append(Token(start, len(piece), math.exp(item.logprob) if item.logprob is not None else None))
    return tokens
