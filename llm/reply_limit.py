"""How much of an LLM endpoint's answer is read: at most REALMATH_LLM_MAX_REPLY_BYTES, uncompressed.

`bound_reply` is a response hook of the HTTP client (`client.bounded_http_client`): it runs before
the body is read, so a misbehaving endpoint cannot fill a worker's memory. The output cap
(`access.cap_output`) then applies to the text. Imported only where a client is built (httpx).
"""
import httpx2  # the HTTP library of this `openai` release (requirements.txt pins both)

from . import access
from .client import ReplyTooLarge


def bound_reply(response):
    """Refuse an answer that says it is too large or compressed; stop reading one without a
    Content-Length once it passes the cap."""
    limit = access.max_reply_bytes()
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        raise ReplyTooLarge(f"The endpoint compressed its answer ({encoding}) though asked not to; it was not read.")
    length = response.headers.get("content-length", "").strip()
    if length.isdigit() and int(length) > limit:
        raise ReplyTooLarge(f"The answer has {int(length):,} bytes, over REALMATH_LLM_MAX_REPLY_BYTES ({limit:,}); "
                            "it was not read.")
    response.stream = CappedStream(response.stream, limit)


class CappedStream(httpx2.SyncByteStream):
    """A response's byte stream that raises ReplyTooLarge once more than `limit` bytes came."""

    def __init__(self, stream, limit):
        self._stream, self._limit = stream, limit

    def __iter__(self):
        seen = 0
        for chunk in self._stream:
            seen += len(chunk)
            if seen > self._limit:
                raise ReplyTooLarge(f"The answer passed REALMATH_LLM_MAX_REPLY_BYTES ({self._limit:,} bytes); "
                                    "reading stopped there.")
            yield chunk

    def close(self):
        self._stream.close()
