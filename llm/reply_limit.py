"""How much of an LLM endpoint's answer is read, and for how long: at most
REALMATH_LLM_MAX_REPLY_BYTES, uncompressed, within the call's timeout as one deadline.

`bound_reply` is a response hook of the HTTP client (`client.bounded_http_client`): it runs before
the body is read, so a misbehaving endpoint cannot fill a worker's memory. The output cap
(`access.cap_output`) then applies to the text.

`start_deadline` (a request hook) and `DeadlineTransport` bound a request's whole time: httpx's
timeouts hold per operation (each read may wait the full read timeout), so a server trickling
one byte every few seconds kept a call alive for ten minutes against a timeout of 8 s. Every
read, write, connect and TLS handshake of the request's connection now gets only what is left
of one deadline (the request's read timeout, counted from when the request starts), and fails
as a timeout (`DeadlinePassed`) once it has passed. Imported only where a client is built (httpx).
"""
import threading
import time

import httpcore2  # httpx2's transport layer (installed with it)
import httpx2  # the HTTP library of this `openai` release (requirements.txt pins both)

from . import access, observe
from .client import ReplyTooLarge

_deadline = threading.local()  # the sync client does a request's I/O on the thread that sent it


class DeadlinePassed(httpcore2.ReadTimeout):
    """The request's overall deadline passed (httpx reports it as a ReadTimeout)."""


def start_deadline(request):
    """Request hook: the request's I/O must end within its read timeout, counted from now."""
    total = (request.extensions.get("timeout") or {}).get("read")
    _deadline.total = total
    _deadline.at = time.monotonic() + total if total else None


def _passed():
    at = getattr(_deadline, "at", None)
    return at is not None and time.monotonic() >= at


def _remaining(timeout):
    at = getattr(_deadline, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise DeadlinePassed(f"no complete answer within the call's deadline of {_deadline.total:g} s "
                             "(connecting, sending and reading together)")
    return left if timeout is None else min(timeout, left)


def _within_deadline(operation, timeout, *args):
    """Run a network operation with what is left of the deadline; a timeout it causes says so."""
    try:
        return operation(*args, _remaining(timeout))
    except httpcore2.TimeoutException:
        if _passed():
            _remaining(timeout)  # raises DeadlinePassed, with the message
        raise


class DeadlineStream(httpcore2.NetworkStream):
    """A connection whose every operation gets at most what is left of the current request's deadline."""

    def __init__(self, stream):
        self._stream = stream

    def read(self, max_bytes, timeout=None):
        return _within_deadline(self._stream.read, timeout, max_bytes)

    def write(self, buffer, timeout=None):
        return _within_deadline(self._stream.write, timeout, buffer)

    def close(self):
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        return DeadlineStream(_within_deadline(self._stream.start_tls, timeout, ssl_context, server_hostname))

    def get_extra_info(self, info):
        return self._stream.get_extra_info(info)


class DeadlineBackend(httpcore2.NetworkBackend):
    def __init__(self, backend):
        self._backend = backend

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        def connect(host, port, timeout):
            return self._backend.connect_tcp(host, port, timeout, local_address, socket_options)

        return DeadlineStream(_within_deadline(connect, timeout, host, port))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        def connect(path, timeout):
            return self._backend.connect_unix_socket(path, timeout, socket_options)

        return DeadlineStream(_within_deadline(connect, timeout, path))

    def sleep(self, seconds):
        self._backend.sleep(seconds)


class DeadlineTransport(httpx2.HTTPTransport):
    """httpx's own transport, its connections made through DeadlineBackend; each request is
    reported to the host's observer (`watch`)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # httpx builds its connection pool in __init__ and takes no backend argument; the
        # pool's backend is the documented httpcore hook for the network layer.
        self._pool._network_backend = DeadlineBackend(self._pool._network_backend)

    def handle_request(self, request):
        return watch(request, super().handle_request)


def watch(request, send):
    """Send `request` with `send` and report it to the observer (llm.observe): host, method, path,
    the call's label, the bytes of both bodies, status and time; never the content. The record is
    given once the answer's body is closed (after it was read), or when the request failed."""
    observer = observe.observer()
    if observer is None:
        return send(request)
    started, clock = time.time(), time.monotonic()
    url = request.url
    base = (url.host + (f":{url.port}" if url.port else ""), request.method, url.path,
            observe.current_tag() or observe.CallTag())
    sent = _body_bytes(request)
    try:
        response = send(request)
    except BaseException as exc:
        observe.report(observer, base, sent, 0, 0, type(exc).__name__, started, clock)
        raise
    response.stream = CountedStream(response.stream, observer, base, sent, response.status_code, started, clock)
    return response


def _body_bytes(request):
    length = request.headers.get("content-length", "")
    if length.isascii() and length.isdigit():
        return int(length)
    try:
        return len(request.content)
    except httpx2.RequestNotRead:  # a streamed body without a length: not known before it is sent
        return 0


class CountedStream(httpx2.SyncByteStream):
    """An answer's body that counts its bytes and reports the call once it is closed."""

    def __init__(self, stream, observer, base, sent, status, started, clock):
        self._stream, self._observer, self._base = stream, observer, base
        self._sent, self._status, self._started, self._clock = sent, status, started, clock
        self._received, self._error, self._reported = 0, "", False

    def __iter__(self):
        try:
            for chunk in self._stream:
                self._received += len(chunk)
                yield chunk
        except Exception as exc:  # a cut connection, a deadline passed
            self._error = type(exc).__name__
            raise

    def close(self):
        try:
            self._stream.close()
        finally:
            if not self._reported:
                self._reported = True
                observe.report(self._observer, self._base, self._sent, self._status, self._received, self._error,
                               self._started, self._clock)


def bound_reply(response, limit=None):
    """Refuse an answer that says it is too large or compressed; stop reading one without a
    Content-Length once it passes the cap (`limit`, default REALMATH_LLM_MAX_REPLY_BYTES)."""
    limit = limit or access.max_reply_bytes()
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        raise ReplyTooLarge(f"The endpoint compressed its answer ({encoding}) though asked not to; it was not read.")
    length = response.headers.get("content-length", "").strip()
    if length.isascii() and length.isdigit() and int(length) > limit:  # "²".isdigit() is True
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
