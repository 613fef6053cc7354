"""The Batch API on the loopback OpenAI-compatible server: ``/v1/files`` and ``/v1/batches``.

    with LlmServer() as server:
        batches = BatchApi(server, delay=0.5).install()
        batches.plan("expire", keep=3)       # the next batch expires with 3 lines answered
        batches.fail = lambda custom_id, body: "boom" if ... else None   # per-line failures
        batches.refuse("POST", "/files", 429, retry_after=60)   # the next upload is answered 429
        ...
        batches.seen                           # [(batch_id, custom_id)] of every line answered or failed

Files: ``POST /v1/files`` (multipart: ``file``, ``purpose``), ``GET /v1/files`` (``purpose``,
``limit``, ``after``), ``GET /v1/files/{id}`` and ``GET /v1/files/{id}/content``. Batches:
``POST /v1/batches``, ``GET /v1/batches`` (newest first, ``limit``/``after``), ``GET
/v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``.

A batch validates its file (JSONL, unique ``custom_id``, ``POST`` to the batch's endpoint, one
model), is ``in_progress`` for `delay` seconds (its ``request_counts.completed`` grows with the
time), then answers every line as the live server would (its rules and its default, so
``server.script(...)`` with a non-200 reply fails a line, as does `fail`): the answers in the
output file, the failures in the error file. What happens to each new batch can be planned
(`plan`): "complete" (the default), "expire" (answers only `keep` lines, the others get
``batch_expired`` in the error file), "fail" (validation fails: no output at all). A cancelled
batch is ``cancelling``, then ``cancelled`` with the first `keep` lines answered (default none).
Nothing here imports Django; it serves tests and bench/provider_bench_batch.py.
"""
import email.parser
import email.policy
import json
import threading
import time
import uuid
from urllib.parse import parse_qs, urlsplit

from tests.llm_server import completion_body

TERMINAL = ("completed", "failed", "expired", "cancelled")


class BatchApi:
    def __init__(self, server, delay=0.5, validating=0.05, cancel_delay=0.1, create_latency=0.0):
        self.server = server
        self.create_latency = create_latency  # seconds a batch creation takes (the batch exists at its end)
        self.delay = delay
        self.validating = validating
        self.cancel_delay = cancel_delay
        self.fail = None  # (custom_id, body) -> an error message for that line, or None
        self.files = {}
        self.batches = {}
        self.seen = []  # (batch id, custom id) of each line the batch answered or failed
        self.calls = []  # (method, path) of every request to these routes
        self._refusals = []  # (method, path, status, retry_after) the next matching requests get (`refuse`)
        self._plans = []
        self._lock = threading.RLock()

    def install(self):
        self.server.extensions.append(self)
        return self

    def plan(self, outcome, keep=0):
        """What the next batch created does: "complete", "expire" or "fail"."""
        with self._lock:
            self._plans.append((outcome, keep))
        return self

    def refuse(self, method, path, status=429, retry_after=None, times=1):
        """The next `times` requests to exactly this path ("/files", "/batches", ...) are answered
        `status` (a 429 with ``Retry-After: retry_after``) instead of being served."""
        with self._lock:
            self._refusals.extend([(method, path, status, retry_after)] * times)
        return self

    def count(self, method, path):
        """Requests made to exactly this path ("/files", "/batches", ...)."""
        return sum(1 for m, p in self.calls if m == method and p == path)

    # --- routing -----------------------------------------------------------------------
    def handle(self, handler, method):
        url = urlsplit(handler.path)
        parts = [p for p in url.path.split("/") if p]
        if parts[:1] == ["v1"]:
            parts = parts[1:]
        if not parts or parts[0] not in ("files", "batches"):
            return False
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        path = "/" + "/".join(parts)
        with self._lock:
            self.calls.append((method, path))
            refusal = next((r for r in self._refusals if r[:2] == (method, path)), None)
            if refusal is not None:
                self._refusals.remove(refusal)
        if refusal is not None:
            status, retry_after = refusal[2:]
            kind = "rate_limit_exceeded" if status == 429 else "server_error"
            handler._send_json(status, {"error": {"message": f"scripted {status}", "type": kind}},
                               {} if retry_after is None else {"Retry-After": str(retry_after)})
            return True
        try:
            status, body = self._route(method, parts, query, raw, handler.headers.get("Content-Type", ""))
        except KeyError:
            status, body = 404, {"error": {"message": "No such object.", "type": "invalid_request_error"}}
        if isinstance(body, bytes):
            handler._send_raw(status, body, "application/octet-stream", {})
        else:
            handler._send_json(status, body)
        return True

    def _route(self, method, parts, query, raw, content_type):
        if parts[0] == "files":
            if method == "POST" and len(parts) == 1:
                return 200, self._upload(raw, content_type)
            if method == "GET" and len(parts) == 1:
                items = [f["meta"] for f in self.files.values()
                         if not query.get("purpose") or f["meta"]["purpose"] == query["purpose"]]
                return 200, _page(items, query)
            if method == "GET" and len(parts) == 2:
                return 200, self.files[parts[1]]["meta"]
            if method == "GET" and len(parts) == 3 and parts[2] == "content":
                return 200, self.files[parts[1]]["data"]
        else:
            if method == "POST" and len(parts) == 1:
                return self._create(json.loads(raw or b"{}"))
            if method == "GET" and len(parts) == 1:
                with self._lock:
                    for batch in self.batches.values():
                        self._advance(batch)
                    items = [b["meta"] for b in self.batches.values()]
                return 200, _page(items, query)
            if method == "GET" and len(parts) == 2:
                with self._lock:
                    batch = self.batches[parts[1]]
                    self._advance(batch)
                    return 200, batch["meta"]
            if method == "POST" and len(parts) == 3 and parts[2] == "cancel":
                with self._lock:
                    batch = self.batches[parts[1]]
                    self._advance(batch)
                    meta = batch["meta"]
                    if meta["status"] not in TERMINAL and meta["status"] != "cancelling":
                        meta["status"], meta["cancelling_at"] = "cancelling", int(time.time())
                        batch["cancel_at"] = time.time() + self.cancel_delay
                    return 200, meta
        return 404, {"error": {"message": "not found"}}

    # --- files -------------------------------------------------------------------------
    def _upload(self, raw, content_type):
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + raw)
        fields, data, filename = {}, b"", "upload.jsonl"
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if name == "file":
                data, filename = part.get_payload(decode=True), part.get_filename() or filename
            else:
                fields[name] = part.get_content().strip()
        return self._store(data, filename, fields.get("purpose", ""))

    def _store(self, data, filename, purpose):
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        meta = {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": filename, "purpose": purpose, "status": "processed"}
        with self._lock:
            self.files[file_id] = {"meta": meta, "data": data}
        return meta

    # --- batches -----------------------------------------------------------------------
    def _create(self, request):
        if self.create_latency:
            time.sleep(self.create_latency)
        source = self.files.get(request.get("input_file_id", ""))
        if source is None:
            return 400, {"error": {"message": "input_file_id names no file", "type": "invalid_request_error"}}
        if request.get("completion_window") != "24h" or request.get("endpoint") != "/v1/chat/completions":
            return 400, {"error": {"message": "bad completion_window or endpoint", "type": "invalid_request_error"}}
        now = time.time()
        with self._lock:
            outcome, keep = self._plans.pop(0) if self._plans else ("complete", 0)
            batch_id = f"batch_{uuid.uuid4().hex[:24]}"
            meta = {
                "id": batch_id, "object": "batch", "endpoint": request["endpoint"], "errors": None,
                "input_file_id": source["meta"]["id"], "completion_window": "24h", "status": "validating",
                "output_file_id": None, "error_file_id": None, "created_at": int(now), "in_progress_at": None,
                "expires_at": int(now) + 86400, "finalizing_at": None, "completed_at": None, "failed_at": None,
                "expired_at": None, "cancelling_at": None, "cancelled_at": None,
                "request_counts": {"total": 0, "completed": 0, "failed": 0},
                "metadata": request.get("metadata") or {},
            }
            self.batches[batch_id] = {"meta": meta, "created": now, "outcome": outcome, "keep": keep,
                                      "lines": None, "cancel_at": None}
            self._advance(self.batches[batch_id])
        return 200, meta

    def _advance(self, batch):
        """Move a batch along its life by the clock (called under the lock at each look)."""
        meta, now = batch["meta"], time.time()
        if meta["status"] in TERMINAL:
            return
        if meta["status"] == "validating" and now >= batch["created"] + self.validating:
            lines, problem = _validate(self.files[meta["input_file_id"]]["data"])
            if problem or batch["outcome"] == "fail":
                meta.update(status="failed", failed_at=int(now), errors={"object": "list", "data": [
                    {"code": "invalid_request", "message": problem or "scripted validation failure", "line": None}]})
                return
            batch["lines"] = lines
            meta.update(status="in_progress", in_progress_at=int(now))
            meta["request_counts"]["total"] = len(lines)
        if meta["status"] == "in_progress":
            done = min(1.0, (now - batch["created"]) / self.delay) if self.delay else 1.0
            meta["request_counts"]["completed"] = int(len(batch["lines"]) * done * 0.999)
            if done >= 1.0:
                if batch["outcome"] == "expire":
                    self._finish(batch, "expired", keep=batch["keep"])
                else:
                    self._finish(batch, "completed")
        if meta["status"] == "cancelling" and now >= batch["cancel_at"]:
            self._finish(batch, "cancelled", keep=batch["keep"])

    def _finish(self, batch, status, keep=None):
        meta = batch["meta"]
        lines = batch["lines"] or []
        output, errors = [], []
        for index, line in enumerate(lines):
            custom_id = line["custom_id"]
            if keep is not None and index >= keep:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                errors.append({"id": f"batch_req_{uuid.uuid4().hex[:16]}", "custom_id": custom_id, "response": None,
                               "error": {"code": code, "message": f"This line was not executed: the batch {status}."}})
                continue
            self.seen.append((meta["id"], custom_id))
            failed = self.fail(custom_id, line["body"]) if self.fail else None
            reply = None if failed else self.server._choose(line["body"])
            if failed or reply.status != 200 or reply.body is not None:
                status_code = 500 if failed else reply.status
                errors.append({"id": f"batch_req_{uuid.uuid4().hex[:16]}", "custom_id": custom_id, "error": None,
                               "response": {"status_code": status_code, "request_id": uuid.uuid4().hex, "body": {
                                   "error": {"message": failed or f"scripted {status_code}", "type": "server_error"}}}})
                continue
            output.append({"id": f"batch_req_{uuid.uuid4().hex[:16]}", "custom_id": custom_id, "error": None,
                           "response": {"status_code": 200, "request_id": uuid.uuid4().hex,
                                        "body": completion_body(reply, line["body"])}})
        now = int(time.time())
        if output:
            meta["output_file_id"] = self._store(_jsonl(output), "batch_output.jsonl", "batch_output")["id"]
        if errors:
            meta["error_file_id"] = self._store(_jsonl(errors), "batch_errors.jsonl", "batch_output")["id"]
        failed_count = sum(1 for e in errors if e["response"] is not None)
        meta["request_counts"] = {"total": len(lines), "completed": len(output), "failed": failed_count}
        meta.update(status=status, finalizing_at=now)
        meta[f"{status}_at"] = now


def _validate(data):
    lines, ids, models = [], set(), set()
    for number, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            return None, f"line {number} is blank"
        try:
            line = json.loads(raw)
        except ValueError:
            return None, f"line {number} is not JSON"
        if line.get("method") != "POST" or line.get("url") != "/v1/chat/completions":
            return None, f"line {number}: method or url is not POST /v1/chat/completions"
        if line.get("custom_id") in ids or not line.get("custom_id"):
            return None, f"line {number}: custom_id missing or repeated"
        ids.add(line["custom_id"])
        models.add((line.get("body") or {}).get("model"))
        lines.append(line)
    if len(models) > 1:
        return None, "the lines name more than one model"
    if not lines:
        return None, "the file has no request"
    return lines, None


def _jsonl(rows):
    return "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")


def _page(items, query):
    items = list(reversed(items))  # newest first (insertion order)
    after = query.get("after")
    if after:
        ids = [item["id"] for item in items]
        items = items[ids.index(after) + 1:] if after in ids else []
    limit = int(query.get("limit") or 20)
    page = items[:limit]
    return {"object": "list", "data": page, "has_more": len(items) > limit,
            "first_id": page[0]["id"] if page else None, "last_id": page[-1]["id"] if page else None}
