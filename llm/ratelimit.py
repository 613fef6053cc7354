"""
Limits per LLM endpoint that hold across threads, worker processes and machines.

Three limits, each optional: calls in flight at once (concurrency), requests per minute and
tokens per minute (both over a sliding 60-second window). A 429 with ``Retry-After`` also
pauses the endpoint for everyone (`cooldown`).

Where the shared state lives:

- ``REDIS_URL`` set: in Redis, updated by Lua scripts (atomic, uses the Redis clock), so the
  limits hold for any number of workers on any number of machines.
- otherwise: a small JSON file per endpoint under the configured directory
  (``LlmConfig.ratelimit_dir``, the app's ``LLM_RATELIMIT_DIR``, default ``var/ratelimit/``), read and written under an exclusive ``fcntl`` lock. This holds across
  processes on one machine, which is the embedded setup (SQLite, one host). Run workers on
  several machines only with ``REDIS_URL``.

A call in flight holds a lease that expires (call timeout + a margin), so a worker killed in
the middle of a call cannot keep its slot forever.
"""
import fcntl
import json
import os
import random
import threading
import time
import uuid
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path

from .config import current

WINDOW = 60.0
CONCURRENCY_POLL = 0.005
MAX_CONCURRENCY_POLL = 0.02
# A slot passes straight from a finished call to a waiting thread of the same process only if
# this process read the shared store this recently (so a cooldown set elsewhere is seen in time).
HAND_OVER_STALENESS = 0.1


@dataclass(frozen=True)
class Limits:
    key: str
    max_concurrency: int = 0
    requests_per_minute: int = 0
    tokens_per_minute: int = 0
    lease_seconds: float = 180.0
    window: float = WINDOW


@dataclass
class Permit:
    holder: str
    tokens: int
    granted: float = 0.0  # time.monotonic() when the store granted it: its lease runs from then


class Limiter:
    """Blocks until a call to the endpoint may start; release when it ends."""

    def __init__(self, limits, store=None):
        self.limits = limits
        self.store = store or default_store()
        self._local = _local_semaphore(limits.key, limits.max_concurrency)
        self._waiters = _waiters_for(limits.key)
        # Only a pure concurrency limit lets a slot pass between threads without the store:
        # per-minute budgets count every call there.
        self._may_pass = bool(limits.max_concurrency) and not limits.requests_per_minute and not limits.tokens_per_minute

    def acquire(self, tokens=0):
        """Wait for a slot and for room in the per-minute budgets; return a Permit."""
        if self._local is not None:
            self._local.acquire()
        try:
            holder = uuid.uuid4().hex
            ok, wait = self._try_store(holder, tokens)
            if ok:
                return Permit(holder, tokens, time.monotonic())
            with self._waiters.turn(on_leftover=self._give_back) as turn:
                poll = CONCURRENCY_POLL
                while True:
                    if wait > CONCURRENCY_POLL:  # a per-minute budget or a cooldown: sleep it out
                        time.sleep(min(wait, 5.0) * random.uniform(1.0, 1.1))
                    elif turn.wait(poll * random.uniform(1.0, 1.1)):
                        poll = CONCURRENCY_POLL  # woken by a release here: try at once
                    else:
                        poll = min(poll * 1.5, MAX_CONCURRENCY_POLL)
                    passed = turn.take()
                    if passed is not None:
                        return Permit(passed.holder, tokens, passed.granted)
                    ok, wait = self._try_store(holder, tokens)
                    if ok:
                        return Permit(holder, tokens, time.monotonic())
        except BaseException:
            if self._local is not None:
                self._local.release()
            raise

    def release(self, permit, actual_tokens=None):
        try:
            if not (self._may_pass and self._fresh(permit) and self._waiters.pass_on(permit)):
                self._give_back(permit, actual_tokens)
        finally:
            if self._local is not None:
                self._local.release()

    def may_keep(self, permit):
        """Whether the holder of `permit` may use it again for its next call without the store
        (a pure concurrency limit, its lease with time left, the store seen lately without a cooldown)."""
        return self._may_pass and self._fresh(permit)

    def _try_store(self, holder, tokens):
        ok, wait = self.store.try_acquire(self.limits, holder, tokens)
        self._waiters.saw_store(wait)
        return ok, wait

    def _give_back(self, permit, actual_tokens=None):
        self.store.release(self.limits, permit.holder, actual_tokens)
        self._waiters.saw_store(0.0)
        self._waiters.notify()

    def _fresh(self, permit):
        """Whether `permit` may pass to another thread: its lease has time left and this
        process has seen the store lately, with no cooldown on."""
        now = time.monotonic()
        return now - permit.granted < self.limits.lease_seconds / 2 and self._waiters.store_is_fresh(now)

    @contextmanager
    def slot(self, tokens=0):
        permit = self.acquire(tokens)
        try:
            yield permit
        finally:
            self.release(permit)

    def cooldown(self, seconds):
        """Make every worker wait `seconds` before its next call to this endpoint."""
        if seconds > 0:
            self.store.cooldown(self.limits, seconds)
            self._waiters.saw_store(seconds)


_semaphores = {}
_semaphores_lock = threading.Lock()


def _local_semaphore(key, size):
    """In-process gate in front of the shared store, so threads of one worker do not poll it."""
    if not size:
        return None
    with _semaphores_lock:
        pid_key = (os.getpid(), key, size)
        if pid_key not in _semaphores:
            _semaphores[pid_key] = threading.BoundedSemaphore(size)
        return _semaphores[pid_key]


class _Waiters:
    """The threads of this process waiting for a slot of one endpoint, in arrival order.

    Only the first one polls the shared store (a slot freed by another process is seen within
    MAX_CONCURRENCY_POLL seconds, at the cost of one store call per poll per process, not one
    per waiting thread); the others sleep until it is their turn. A release in this process
    wakes the first waiter at once, and a waiter that gets its slot hands the turn on, so a
    burst of releases is taken up without waiting for a poll.

    Under a pure concurrency limit a finished call passes its slot (the store's holder and
    lease) straight to the first waiter (`pass_on`): no store call on either side, as long as
    this process read the store within HAND_OVER_STALENESS seconds and saw no cooldown there.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._queue = deque()
        self._store_seen = float("-inf")
        self._paused_until = float("-inf")

    @contextmanager
    def turn(self, on_leftover=None):
        turn = _Turn()
        with self._lock:
            self._queue.append(turn)
            if self._queue[0] is turn:
                turn.first = True
        try:
            yield turn
        finally:
            with self._lock:
                turn.closed = True
                leftover, turn.permit = turn.permit, None  # passed on after the waiter stopped looking
                was_first = self._queue[0] is turn
                self._queue.remove(turn)
                if was_first and self._queue:
                    self._queue[0].first = True
                    self._queue[0].event.set()
            if leftover is not None and on_leftover is not None:
                on_leftover(leftover)

    def notify(self):
        """A slot was released in this process: let the first waiter try now."""
        with self._lock:
            if self._queue:
                self._queue[0].event.set()

    def pass_on(self, permit):
        """Give `permit` to the first waiter that has none; False if nobody is waiting."""
        with self._lock:
            for turn in self._queue:
                if turn.permit is None and not turn.closed:
                    turn.permit = permit
                    turn.event.set()
                    return True
        return False

    def saw_store(self, wait):
        """The store was read or written just now; `wait` > 0: it asked to wait that long."""
        now = time.monotonic()
        self._store_seen = now
        if wait > 0:
            self._paused_until = max(self._paused_until, now + wait)

    def store_is_fresh(self, now):
        return now - self._store_seen < HAND_OVER_STALENESS and now >= self._paused_until


class _Turn:
    def __init__(self):
        self.first = False
        self.closed = False
        self.permit = None  # a slot passed on by a finished call of this process
        self.event = threading.Event()

    def take(self):
        """The permit passed on to this turn, if any (the turn then takes no other)."""
        permit = self.permit
        if permit is not None:  # pass_on skips a turn that holds a permit, so no lock is needed
            self.closed = True
            self.permit = None
        return permit

    def wait(self, poll):
        """Sleep until woken (True) or, for the first waiter, until `poll` seconds pass (False).

        Later waiters also look again after a second, as a safety net.
        """
        woken = self.event.wait(poll if self.first else 1.0)
        self.event.clear()
        return woken


_waiters = {}


def _waiters_for(key):
    with _semaphores_lock:
        return _waiters.setdefault((os.getpid(), key), _Waiters())


def default_store():
    """Redis when the config has a Redis URL, else files under its rate-limit directory."""
    config = current()
    if config.redis_url:
        return RedisStore.for_url(config.redis_url, config.ratelimit_prefix)
    return FileStore(config.ratelimit_dir)


# --- the shared state: one algorithm, two stores -------------------------------------------

def _decide(state, limits, holder, tokens, now):
    """Prune `state`, then admit `holder` (mutating state) or say how long to wait."""
    state["holders"] = {h: exp for h, exp in state.get("holders", {}).items() if exp > now}
    window = limits.window
    state["requests"] = [t for t in state.get("requests", []) if t > now - window]
    state["tokens"] = [e for e in state.get("tokens", []) if e[0] > now - window]
    cooldown = state.get("cooldown_until", 0.0)
    if cooldown > now:
        return False, cooldown - now
    if limits.max_concurrency and len(state["holders"]) >= limits.max_concurrency:
        return False, 0.0
    if limits.requests_per_minute and len(state["requests"]) >= limits.requests_per_minute:
        return False, state["requests"][0] + window - now
    if limits.tokens_per_minute and state["tokens"]:
        used = sum(e[1] for e in state["tokens"])
        if used + tokens > limits.tokens_per_minute:
            freed, wait = used, 0.0
            for stamp, count, _ in state["tokens"]:
                freed -= count
                wait = stamp + window - now
                if freed + tokens <= limits.tokens_per_minute:
                    break
            return False, max(wait, 0.01)
    state["holders"][holder] = now + limits.lease_seconds
    if limits.requests_per_minute:
        state["requests"].append(now)
    if limits.tokens_per_minute:
        state["tokens"].append([now, tokens, holder])
    return True, 0.0


def _settle(state, holder, actual_tokens):
    state.get("holders", {}).pop(holder, None)
    if actual_tokens is not None:
        for entry in state.get("tokens", []):
            if entry[2] == holder:
                entry[1] = actual_tokens


class FileStore:
    """Shared state in a JSON file per endpoint, guarded by an exclusive fcntl lock.

    Each process keeps the file open; its threads take a threading lock first (fcntl locks
    belong to the process, not the thread), then the file lock for the other processes.
    """

    _handles = {}
    _handles_lock = threading.Lock()

    def __init__(self, directory):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.key = ("file", str(self.directory))  # stores with the same key share their state

    def _handle(self, key):
        path = self.directory / f"{sha1(key.encode()).hexdigest()[:20]}.json"
        with self._handles_lock:
            entry = self._handles.get((os.getpid(), path))
            if entry is None:
                entry = (os.open(path, os.O_RDWR | os.O_CREAT, 0o644), threading.Lock())
                self._handles[(os.getpid(), path)] = entry
            return entry

    @contextmanager
    def _state(self, key):
        fd, lock = self._handle(key)
        with lock:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                raw = os.pread(fd, 1 << 22, 0)
                try:
                    state = json.loads(raw) if raw else {}
                except ValueError:
                    state = {}
                yield state
                data = json.dumps(state, separators=(",", ":")).encode()
                os.pwrite(fd, data, 0)
                os.ftruncate(fd, len(data))
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def try_acquire(self, limits, holder, tokens):
        with self._state(limits.key) as state:
            return _decide(state, limits, holder, tokens, time.time())

    def release(self, limits, holder, actual_tokens=None):
        with self._state(limits.key) as state:
            _settle(state, holder, actual_tokens)

    def cooldown(self, limits, seconds):
        with self._state(limits.key) as state:
            state["cooldown_until"] = max(state.get("cooldown_until", 0.0), time.time() + seconds)


_ACQUIRE_LUA = """
local holders, reqs, toks, tokn, cool = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local holder = ARGV[1]
local maxc, rpm, tpm = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local tokens, lease, window = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', holders, '-inf', now)
redis.call('ZREMRANGEBYSCORE', reqs, '-inf', now - window)
local old = redis.call('ZRANGEBYSCORE', toks, '-inf', now - window)
for _, member in ipairs(old) do redis.call('HDEL', tokn, member) end
redis.call('ZREMRANGEBYSCORE', toks, '-inf', now - window)
local until_ = tonumber(redis.call('GET', cool) or '0')
if until_ > now then return {0, tostring(until_ - now)} end
if maxc > 0 and redis.call('ZCARD', holders) >= maxc then return {0, '0'} end
if rpm > 0 and redis.call('ZCARD', reqs) >= rpm then
  local first = redis.call('ZRANGE', reqs, 0, 0, 'WITHSCORES')
  return {0, tostring(tonumber(first[2]) + window - now)}
end
if tpm > 0 then
  local used = 0
  for _, v in ipairs(redis.call('HVALS', tokn)) do used = used + tonumber(v) end
  if used > 0 and used + tokens > tpm then
    local entries = redis.call('ZRANGE', toks, 0, -1, 'WITHSCORES')
    local freed, wait = used, 0.01
    for i = 1, #entries, 2 do
      freed = freed - tonumber(redis.call('HGET', tokn, entries[i]) or '0')
      wait = tonumber(entries[i + 1]) + window - now
      if freed + tokens <= tpm then break end
    end
    if wait < 0.01 then wait = 0.01 end
    return {0, tostring(wait)}
  end
end
redis.call('ZADD', holders, now + lease, holder)
if rpm > 0 then redis.call('ZADD', reqs, now, holder) end
if tpm > 0 then
  redis.call('ZADD', toks, now, holder)
  redis.call('HSET', tokn, holder, tokens)
end
for _, k in ipairs(KEYS) do redis.call('EXPIRE', k, math.ceil(window + lease)) end
return {1, '0'}
"""

_RELEASE_LUA = """
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[2] ~= '' and redis.call('HEXISTS', KEYS[4], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
end
return 1
"""

_COOLDOWN_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local until_ = now + tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[5]) or '0')
if until_ > current then redis.call('SET', KEYS[5], tostring(until_), 'EX', math.ceil(tonumber(ARGV[1])) + 1) end
return 1
"""


class RedisStore:
    """Shared state in Redis sorted sets, changed only by atomic Lua scripts."""

    _clients = {}
    _lock = threading.Lock()

    def __init__(self, client, prefix):
        self.client = client
        self.prefix = prefix
        self.key = ("redis", id(client), prefix)  # stores with the same key share their state
        self._acquire = client.register_script(_ACQUIRE_LUA)
        self._release = client.register_script(_RELEASE_LUA)
        self._cooldown = client.register_script(_COOLDOWN_LUA)

    @classmethod
    def for_url(cls, url, prefix):
        import redis  # imported here: only with REDIS_URL, and ~0.5 s

        with cls._lock:
            key = (os.getpid(), url)
            if key not in cls._clients:
                cls._clients[key] = redis.Redis.from_url(url)
            return cls(cls._clients[key], prefix)

    def _keys(self, key):
        base = f"{self.prefix}{{{sha1(key.encode()).hexdigest()[:20]}}}"
        return [f"{base}:holders", f"{base}:requests", f"{base}:tokens", f"{base}:token-counts", f"{base}:cooldown"]

    def try_acquire(self, limits, holder, tokens):
        ok, wait = self._acquire(
            keys=self._keys(limits.key),
            args=[
                holder, limits.max_concurrency or 0, limits.requests_per_minute or 0,
                limits.tokens_per_minute or 0, int(tokens), limits.lease_seconds, limits.window,
            ],
        )
        return bool(int(ok)), float(wait)

    def release(self, limits, holder, actual_tokens=None):
        self._release(keys=self._keys(limits.key), args=[holder, "" if actual_tokens is None else int(actual_tokens)])

    def cooldown(self, limits, seconds):
        self._cooldown(keys=self._keys(limits.key), args=[float(seconds)])
