"""
A scriptable OpenAI-compatible HTTP server for tests and benchmarks.

It answers ``POST /v1/chat/completions`` (and ``GET /v1/models``) on 127.0.0.1 and can be
told, per request, to be slow, to answer 429 with ``Retry-After``, to fail with a 5xx, to
hang past the client's timeout, to trickle its answer a byte at a time (``trickle``), to send a
body that is not JSON (of any ``content_type``), or to reply with any text
(garbage, out-of-range scores...). It counts requests and records what it saw, so a test can
assert how many calls a run made and how many were in flight at once.

Use it from a test::

    with LlmServer() as server:
        server.script("student-7", Reply(status=429, retry_after=1), Reply("Overall Score: 4"))
        server.default = lambda request: Reply("Overall Score: 5")
        client = OpenAI(base_url=server.url, api_key="test", max_retries=0)
        ...
        assert server.request_count == 2

or from the command line (the benchmark and a local demo do this)::

    python tests/llm_server.py --port 8001 --latency 0.2

and read its counters from another process with ``GET /v1/stats`` (``POST /v1/stats/reset``).

Rate limits as a provider enforces them (tests/llm_limits.py): ``server.limits =
KeyLimits(requests_per_minute=600, tokens_per_minute=200_000)`` answers 429 beyond them, per API
key, and sends the ``x-ratelimit-*`` headers on every answer; ``server.latency`` may be a function
(``uniform_latency(0.2, 0.8)``). From the command line: ``--rpm``, ``--tpm``, ``--latency-max``;
``POST /v1/limits`` with ``{"rpm": .., "tpm": ..}`` changes them while it runs.

It also answers ``POST /v1/embeddings`` (each input's vector is ``server.embedder(text)``, by
default `hash_vector`: the same text always gets the same unit vector) and ``POST
/v1/completions`` with ``echo`` and ``logprobs`` (the prompt's tokens and log-probabilities
come from ``server.scorer(prompt)``, by default `word_scores`: word tokens with scripted
log-probabilities, and a top-k dictionary per position), and with vLLM's ``prompt_logprobs: k``
the same figures in vLLM's shape (``choices[0].prompt_logprobs``, `tests/vllm_shapes.py`).
Rules match these requests on their ``input`` / ``prompt`` text and can make them fail or wait like chat requests; a rule's
successful reply (status 200, no ``body``) gets the scripted vectors or log-probabilities.

A rule matches a request when its text appears in the request's messages; rules are tried
in the order they were added and each consumes its replies in order, then stops matching.
Requests no rule claims get ``server.default`` (a Reply, or a function of the request); the
default default is the scripted model of ``llm.scripted``, which answers each prompt
the app sends (rubric scores, IneqMath final-answer and step verdicts, the meta-evaluator's
JSON, synthetic answers, OCR transcriptions) in the form the app expects, with made-up values.
"""
import argparse
import dataclasses
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from llm import scripted  # noqa: E402  (plain Python, no Django)
from tests import llm_limits, vllm_shapes  # noqa: E402  (plain Python)


@dataclass
class Reply:
    """What the server does for one request."""

    content: str = "Overall Score: 0"
    status: int = 200
    latency: float = 0.0
    retry_after: float | str | None = None
    hang: float | None = None
    body: bytes | None = None
    chunked: bool = False  # send `body` without Content-Length, in chunks (Transfer-Encoding: chunked)
    content_type: str = "application/json"  # of a raw `body`
    trickle: float | None = None  # send the answer's body one byte at a time, this many seconds apart
    trickle_headers: bool = False  # with `trickle`: the status line and headers too
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    headers: dict = field(default_factory=dict)


@dataclass
class RecordedRequest:
    started: float
    finished: float
    path: str
    payload: dict
    headers: dict  # names in lower case
    status: int

    @property
    def text(self):
        return message_text(self.payload)


def message_text(payload):
    """All message contents of a chat request, joined (for embeddings and completions requests:
    their ``input`` or ``prompt`` texts)."""
    parts = []
    for key in ("input", "prompt"):
        value = payload.get(key)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(str(piece) for piece in value)
    parts.extend(scripted.message_parts(payload.get("messages")))
    return "\n".join(parts)


def hash_vector(text, dims=16):
    """A unit vector made from the text's SHA-256 (the default embedder): equal texts, equal vectors."""
    import hashlib
    import math

    digest = hashlib.sha256(str(text).encode("utf-8")).digest()
    raw = [(digest[i % len(digest)] + 1) * (1 if digest[(i + 7) % len(digest)] % 2 else -1) for i in range(dims)]
    norm = math.sqrt(sum(v * v for v in raw))
    return [v / norm for v in raw]


WORD = __import__("re").compile(r"\s*\S+|\s+$")


def word_scores(prompt, top_k=5):
    """The default scorer: word tokens (each with the spaces before it), log-probability
    -0.1 x the token's length, and a top-k dictionary holding the token itself and k - 1 others."""
    rows = []
    for match in WORD.finditer(prompt):
        token = match.group(0)
        logprob = -0.1 * len(token)
        top = {token: logprob, **{f" alt{i}": logprob - 0.5 - i for i in range(max(0, top_k - 1))}}
        rows.append((token, logprob, top))
    return rows


class _Rule:
    def __init__(self, match, replies):
        self.match = match
        self.replies = list(replies)
        self.used = 0


def demo_reply(payload):
    """The scripted model's answer (llm.scripted): each prompt the app sends gets a
    made-up answer in the form the app expects (score, verdicts, JSON, a synthetic answer)."""
    return Reply(scripted.answer(payload.get("messages") or [], model=payload.get("model", ""),
                                 temperature=payload.get("temperature")))


class LlmServer:
    """An OpenAI-compatible chat-completions server in a background thread."""

    def __init__(self, host="127.0.0.1", port=0, default=None, latency=0.0):
        self.host = host
        self.port = port
        self.default = default if default is not None else demo_reply
        self.embedder = hash_vector
        self.scorer = word_scores
        self.latency = latency  # seconds, or a function giving each call's
        self.limits = None  # a llm_limits.KeyLimits: 429 beyond a key's requests and tokens per minute
        self._rules = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd = None
        self._thread = None
        self.requests = []
        self.in_flight = 0
        self.max_in_flight = 0
        # Extra routes: objects with ``handle(handler, method) -> bool`` asked first for every
        # request (True: answered). tests/llm_batches.py adds /v1/files and /v1/batches so.
        self.extensions = []

    # --- lifecycle ---------------------------------------------------------------------
    def start(self):
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = _Server((self.host, self.port), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="llm-server", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._release.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self):
        """The base URL to give the openai client (ends with /v1)."""
        return f"http://{self.host}:{self.port}/v1"

    # --- scripting ---------------------------------------------------------------------
    def script(self, match, *replies):
        """Requests whose messages contain `match` (None: any request) get these replies in order."""
        with self._lock:
            self._rules.append(_Rule(match, replies))
        return self

    def reset(self):
        """Forget rules, counters and the request log."""
        with self._lock:
            self._rules.clear()
            self.requests.clear()
            self.max_in_flight = self.in_flight

    def release_hangs(self):
        """Let requests that hang finish now, and later ones not hang at all."""
        self._release.set()

    # --- observations ------------------------------------------------------------------
    @property
    def request_count(self):
        with self._lock:
            return len(self.requests)

    def count(self, match=None, status=None):
        """Requests seen whose text contains `match` and (optionally) answered with `status`."""
        with self._lock:
            seen = list(self.requests)
        return sum(
            1 for r in seen if (match is None or match in r.text) and (status is None or r.status == status)
        )

    def max_requests_in_window(self, seconds, status=None, match=None, since=0.0):
        """The largest number of requests that started within any window of this length (only
        those answered `status`, whose text has `match`, started from `since` on, when given)."""
        with self._lock:
            starts = sorted(r.started for r in self.requests if r.started >= since and (status is None or r.status == status)
                            and (match is None or match in r.text))
        best, left = 0, 0
        for right, start in enumerate(starts):
            while start - starts[left] >= seconds:
                left += 1
            best = max(best, right - left + 1)
        return best

    # --- serving -----------------------------------------------------------------------
    def _choose(self, payload, chat=True):
        text = message_text(payload)
        with self._lock:
            for rule in self._rules:
                if rule.used < len(rule.replies) and (rule.match is None or rule.match in text):
                    reply = rule.replies[rule.used]
                    rule.used += 1
                    return reply
        if not chat:
            return Reply()
        default = self.default
        return default(payload) if callable(default) else default

    def _enter(self):
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self, record):
        with self._lock:
            self.in_flight -= 1
            self.requests.append(record)


def completion_body(reply, payload):
    """The chat completion a successful `reply` to `payload` is (live, and in a batch's output file)."""
    prompt_tokens = reply.prompt_tokens
    if prompt_tokens is None:
        prompt_tokens = len(message_text(payload)) // 4 + 1
    completion_tokens = reply.completion_tokens
    if completion_tokens is None:
        completion_tokens = len(reply.content) // 4 + 1
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": payload.get("model", "test-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class _Server(ThreadingHTTPServer):
    # The default listen backlog of 5 drops bursts of new connections (the client then
    # waits a second to retry): far below the concurrency tests and benchmarks use.
    request_queue_size = 1024
    daemon_threads = True


class _Handler(BaseHTTPRequestHandler):
    owner: LlmServer = None
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm the body then waits for
    # the client's delayed ACK (40 ms on Linux) on every keep-alive request.
    disable_nagle_algorithm = True

    def log_message(self, *args):  # keep test output quiet
        pass

    def _extension(self, method):
        return any(extension.handle(self, method) for extension in list(self.owner.extensions))

    def do_GET(self):
        if self._extension("GET"):
            return
        if self.path.rstrip("/").endswith("/stats"):
            owner = self.owner
            self._send_json(200, {"requests": owner.request_count, "max_in_flight": owner.max_in_flight,
                                  "in_flight": owner.in_flight, "rate_limited": owner.count(status=429),
                                  "limits": owner.limits.stats() if owner.limits is not None else None})
        elif self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": "not found"}})

    def do_POST(self):
        if self._extension("POST"):
            return
        owner = self.owner
        if self.path.rstrip("/").endswith("/stats/reset"):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            owner.reset()
            self._send_json(200, {"reset": True})
            return
        if self.path.rstrip("/").endswith("/limits") and owner.limits is not None:
            change = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            owner.limits.set(change.get("rpm"), change.get("tpm"))
            self._send_json(200, owner.limits.stats())
            return
        started = time.time()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            payload = json.loads(raw or b"{}")
        except ValueError:
            payload = {}
        owner._enter()
        # Recorded just before the answer's bytes go out (see _send_raw), so a client that
        # has its answer always finds its request in owner.requests.
        self._pending = RecordedRequest(
            started=started, finished=0.0, path=self.path, payload=payload,
            headers={k.lower(): v for k, v in self.headers.items()}, status=0,
        )
        try:
            path = self.path.rstrip("/")
            kind = next((k for k in ("/chat/completions", "/embeddings", "/completions") if path.endswith(k)), None)
            if kind is None:
                self._send_json(404, {"error": {"message": "not found"}})
                return
            if owner.limits is not None:  # a provider's rate limits: 429 at once, else their headers
                gate = owner.limits.admit(llm_limits.api_key_of(self.headers),
                                          llm_limits.request_cost(payload, message_text(payload)))
                if gate.refused is not None:
                    self._send_json(429, gate.refused, gate.headers)
                    return
            reply = owner._choose(payload, chat=kind == "/chat/completions")
            if owner.limits is not None:
                reply = dataclasses.replace(reply, headers={**gate.headers, **reply.headers})
            self._trickle = (reply.trickle, reply.trickle_headers) if reply.trickle else None
            delay = reply.latency or (owner.latency() if callable(owner.latency) else owner.latency)
            if delay:
                time.sleep(delay)
            if reply.hang is not None:
                owner._release.wait(reply.hang)
            if kind == "/chat/completions" or reply.body is not None or reply.status != 200:
                self._answer(reply, payload)
            elif kind == "/embeddings":
                self._answer_embeddings(payload, reply.headers)
            else:
                self._answer_completion(payload, reply.headers)
        except (BrokenPipeError, ConnectionResetError):
            self._record(499)
        finally:
            self._record(0)

    def _record(self, status):
        record, self._pending = getattr(self, "_pending", None), None
        if record is not None:
            record.status, record.finished = status, time.time()
            self.owner._leave(record)

    def _answer(self, reply, payload):
        headers = dict(reply.headers)
        if reply.retry_after is not None:
            headers["Retry-After"] = str(reply.retry_after)
        if reply.body is not None:
            self._send_raw(reply.status, reply.body, reply.content_type, headers, chunked=reply.chunked)
            return
        if reply.status != 200:
            kind = "rate_limit_exceeded" if reply.status == 429 else "server_error"
            self._send_json(reply.status, {"error": {"message": f"scripted {reply.status}", "type": kind}}, headers)
            return
        self._send_json(200, completion_body(reply, payload), headers)

    def _answer_embeddings(self, payload, headers):
        texts = payload.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        data = [{"object": "embedding", "index": i, "embedding": list(self.owner.embedder(text))}
                for i, text in enumerate(texts)]
        tokens = sum(len(str(t)) // 4 + 1 for t in texts)
        self._send_json(200, {"object": "list", "data": data, "model": payload.get("model", "test-model"),
                              "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}, headers)

    def _answer_completion(self, payload, headers):
        """A legacy completion: with ``echo`` the prompt's tokens and log-probabilities (the first
        token's is null, as servers give it), then one generated token "." when max_tokens > 0."""
        prompt = payload.get("prompt")
        prompt = prompt[0] if isinstance(prompt, list) else str(prompt or "")
        k = int(payload.get("logprobs") or 0)
        rows = list(self.owner.scorer(prompt))
        tokens, logprobs, tops, offsets, position = [], [], [], [], 0
        if payload.get("echo"):
            for index, (token, logprob, top) in enumerate(rows):
                tokens.append(token)
                logprobs.append(None if index == 0 else logprob)
                tops.append(None if index == 0 else dict(list(top.items())[:k]))
                offsets.append(position)
                position += len(token)
        text = prompt if payload.get("echo") else ""
        if int(payload.get("max_tokens") or 0) > 0:
            tokens.append(".")
            logprobs.append(-0.5)
            tops.append({".": -0.5})
            offsets.append(len(text))
            text += "."
        body = {
            "id": f"cmpl-{time.monotonic_ns()}", "object": "text_completion", "created": int(time.time()),
            "model": payload.get("model", "test-model"),
            "choices": [{"index": 0, "text": text, "finish_reason": "length",
                         "logprobs": {"tokens": tokens, "token_logprobs": logprobs, "top_logprobs": tops,
                                      "text_offset": offsets} if k or payload.get("echo") else None}],
            "usage": {"prompt_tokens": len(rows), "completion_tokens": 1, "total_tokens": len(rows) + 1},
        }
        if payload.get("prompt_logprobs") is not None:  # vLLM's extra parameter (tests/vllm_shapes.py)
            body["choices"][0]["prompt_logprobs"] = vllm_shapes.prompt_logprobs(rows, int(payload["prompt_logprobs"]))
        self._send_json(200, body, headers)

    def _send_json(self, status, body, headers=None):
        self._send_raw(status, json.dumps(body).encode("utf-8"), "application/json", headers or {})

    def _send_raw(self, status, data, content_type, headers, chunked=False):
        trickle, self._trickle = getattr(self, "_trickle", None), None
        if trickle:
            self._send_trickling(status, data, content_type, headers, *trickle)
            return
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding" if chunked else "Content-Length", "chunked" if chunked else str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self._record(status)
        if not chunked:
            self.wfile.write(data)
            return
        for start in range(0, len(data), 65536):
            piece = data[start : start + 65536]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")


    def _send_trickling(self, status, data, content_type, headers, every, with_headers):
        """One byte of the answer every `every` seconds (of its body, or of all of it), until the
        client hangs up or the server stops."""
        head = [f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}",
                f"Content-Type: {content_type}", f"Content-Length: {len(data)}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        head_bytes = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
        self._record(status)
        if not with_headers:
            self.wfile.write(head_bytes)
            self.wfile.flush()
        for byte in (head_bytes + data if with_headers else data):
            if self.owner._release.wait(every):
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()


def main():
    parser = argparse.ArgumentParser(description="Run the scriptable OpenAI-compatible test server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each answer")
    parser.add_argument("--latency-max", type=float, default=0.0,
                        help="with it, each answer waits a time drawn between --latency and this")
    parser.add_argument("--rpm", type=int, default=0, help="requests per minute per API key (0: no limit)")
    parser.add_argument("--tpm", type=int, default=0, help="tokens per minute per API key (0: no limit)")
    args = parser.parse_args()
    latency = llm_limits.uniform_latency(args.latency, args.latency_max) if args.latency_max else args.latency
    server = LlmServer(host=args.host, port=args.port, latency=latency)
    if args.rpm or args.tpm:
        server.limits = llm_limits.KeyLimits(requests_per_minute=args.rpm, tokens_per_minute=args.tpm)
    serve_forever(server)


def serve_forever(server):
    """Start `server`, say where it listens (the line a parent process waits for), serve until ^C."""
    server.start()
    print(f"listening on {server.url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
