"""
Limits per LLM endpoint that hold across threads, worker processes and machines.

Three limits, each optional: calls in flight at once (concurrency), requests per minute and
tokens per minute (both over a sliding 60-second window). A 429 with ``Retry-After`` also
pauses the endpoint for everyone (`cooldown`).

Limits learned from the provider: every answer's ``x-ratelimit-*`` headers (llm.headers) reach
the endpoint's limiter (`observe`, through `observe_response`, a response hook of the HTTP client,
while `watching` is on for the call). The per-minute limits they name are written to the shared
store (`learn`, kept LEARNED_TTL seconds and renewed while answers keep saying them), so every
worker paces by them at once; a limit typed on the endpoint stays a ceiling (the lower one holds).
A budget the headers say is spent (``remaining`` below one more call) pauses everyone for the
time it takes to refill. Limits that change mid-run are followed from the next answer on.

Concurrency follows the provider too: a 429 halves the calls the endpoint may have in flight
(at most once per CUT_SECONDS, never below one), and each call that gets its answer raises
that cap by 1/cap until it is back at the endpoint's max concurrency (additive increase,
multiplicative decrease, as TCP does). The cap lives in the shared store beside the limits.

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
import logging
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

from . import cancel
from . import headers as limit_headers
from .config import current

logger = logging.getLogger(__name__)

WINDOW = 60.0
# Limits learned from headers are kept this long in the shared store after the last answer that
# said them, and written again by a process at least this often (or when they change).
LEARNED_TTL = 600.0
LEARNED_REFRESH = 30.0
# After a 429 a process sends every call through the shared store for this long (no slot kept
# from one call to the next without it).
THROTTLED_SECONDS = 60.0
# A 429 cuts the concurrency cap at most this often (the 429s of one burst count once).
CUT_SECONDS = 1.0
CAP_TTL = 600.0  # a cap no call raised for this long is forgotten
# Below this share of a budget left, every answer's count of what is used is checked against the store's.
LOW_REMAINING = 0.2
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
        # per-minute budgets count every call there (learned ones too, see `_may_pass`).
        self._pure_concurrency = (bool(limits.max_concurrency) and not limits.requests_per_minute
                                  and not limits.tokens_per_minute)

    @property
    def _may_pass(self):
        return self._pure_concurrency and time.monotonic() >= self._waiters.paced_until

    def acquire(self, tokens=0, token=None):
        """Wait for a slot and for room in the per-minute budgets; return a Permit.

        Raises cancel.Cancelled, without taking a slot, once the call is cancelled (`token`, a
        cancel.CancelToken, or this process shutting down): a cooldown of minutes is not waited out."""
        if self._local is not None:
            while not self._local.acquire(timeout=cancel.POLL_SECONDS):
                cancel.raise_if_cancelled(token)
        try:
            cancel.raise_if_cancelled(token)
            holder = uuid.uuid4().hex
            ok, wait = self._try_store(holder, tokens)
            if ok:
                return Permit(holder, tokens, time.monotonic())
            with self._waiters.turn(on_leftover=self._give_back) as turn:
                poll = CONCURRENCY_POLL
                while True:
                    if wait > CONCURRENCY_POLL:  # a per-minute budget or a cooldown: sleep it out (or stop)
                        cancel.pause(min(wait, 5.0) * random.uniform(1.0, 1.1), token)
                    elif turn.wait(poll * random.uniform(1.0, 1.1)):
                        poll = CONCURRENCY_POLL  # woken by a release here: try at once
                    else:
                        poll = min(poll * 1.5, MAX_CONCURRENCY_POLL)
                    cancel.raise_if_cancelled(token)  # a slot passed on meanwhile goes back (on_leftover)
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
        # A call whose usage is known got its answer: that raises a concurrency cap a 429 cut.
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

    def throttled(self, seconds):
        """A 429: pause every worker `seconds` (if given), and count this process's calls in the
        shared store for a while (the provider is pacing us)."""
        self._waiters.paced(THROTTLED_SECONDS)
        self.store.throttle(self.limits, seconds or 0.0)
        if seconds:
            self._waiters.saw_store(seconds)

    def observe(self, said, tokens=0, refused=False):
        """An answer's rate-limit headers (a `headers.ProviderLimits`): learn the limits they name
        and pause everyone when they say the budget has no room for a call of `tokens` tokens.

        When the limits are first written, again every LEARNED_REFRESH seconds, on a 429
        (`refused`) and while less than LOW_REMAINING of a budget is left, the store is also told
        what the provider says is used (limit - remaining): calls it counts that the store does
        not (sent before the limits were known, or by another program with the same key) are
        added to the store's window."""
        if said.says_limits:
            self._waiters.paced(LEARNED_TTL)
            learned = (said.requests_per_minute or 0, said.tokens_per_minute or 0)
            if self._waiters.should_write(learned) or refused or _running_low(said):
                self.store.learn(self.limits, *learned, ttl=LEARNED_TTL, used=_used(said))
        pause = said.pause_for(tokens)
        if pause > 0:
            self.cooldown(pause)

    @contextmanager
    def watching(self, tokens=0):
        """While the block runs on this thread, the answers the HTTP client reads reach `observe`."""
        previous = getattr(_watched, "call", None)
        _watched.call = (self, tokens)
        try:
            yield
        finally:
            _watched.call = previous


def _running_low(said):
    return any(limit and remaining is not None and remaining < LOW_REMAINING * limit
               for limit, remaining in ((said.requests_per_minute, said.remaining_requests),
                                        (said.tokens_per_minute, said.remaining_tokens)))


def _used(said):
    """(requests, tokens) the provider says are used of its limits; None where it does not say."""
    def used(limit, remaining):
        return max(0, limit - remaining) if limit and remaining is not None else None

    return (used(said.requests_per_minute, said.remaining_requests), used(said.tokens_per_minute, said.remaining_tokens))


_watched = threading.local()  # the sync client reads a request's answer on the thread that sent it


def observe_response(response):
    """Response hook of the HTTP client: hand the answer's rate-limit headers to the limiter of
    the call this thread is sending (none outside `Limiter.watching`). Never raises: the
    headers only steer the pace, and a store that cannot be written is a problem for the next
    acquire to report."""
    call = getattr(_watched, "call", None)
    if call is None or not current().provider_limits:
        return
    limiter, tokens = call
    try:
        limiter.observe(limit_headers.read_limits(response.headers), tokens, refused=response.status_code == 429)
    except Exception:  # noqa: BLE001 - see above
        logger.warning("Could not record an LLM endpoint's rate-limit headers", exc_info=True)


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
        self.paced_until = float("-inf")  # till then every call goes through the store (see Limiter._may_pass)
        self._learned = None  # the limits this process last wrote to the store, and when
        self._learned_at = float("-inf")

    def paced(self, seconds):
        self.paced_until = max(self.paced_until, time.monotonic() + seconds)

    def should_write(self, learned):
        """Whether learned limits must be written to the store: they changed, or were last written
        LEARNED_REFRESH seconds ago (the store forgets them LEARNED_TTL after the last write)."""
        now = time.monotonic()
        with self._lock:
            if learned == self._learned and now - self._learned_at < LEARNED_REFRESH:
                return False
            self._learned, self._learned_at = learned, now
            return True

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

def ceiling(typed, learned):
    """The limit in force: the lower of the endpoint's own and the provider's (0: none)."""
    given = [int(v) for v in (typed, learned) if v and int(v) > 0]
    return min(given) if given else 0


def _decide(state, limits, holder, tokens, now):
    """Prune `state`, then admit `holder` (mutating state) or say how long to wait."""
    learned = state.get("learned")
    if learned and learned.get("until", 0.0) <= now:
        state.pop("learned", None)
        learned = None
    rpm = ceiling(limits.requests_per_minute, learned and learned.get("rpm"))
    tpm = ceiling(limits.tokens_per_minute, learned and learned.get("tpm"))
    cap = state.get("cap")
    if cap and cap.get("until", 0.0) <= now:
        state.pop("cap", None)
        cap = None
    max_concurrency = ceiling(limits.max_concurrency, cap and int(cap["value"]))
    state["holders"] = {h: exp for h, exp in state.get("holders", {}).items() if exp > now}
    window = limits.window
    state["requests"] = [t for t in state.get("requests", []) if t > now - window]
    state["tokens"] = [e for e in state.get("tokens", []) if e[0] > now - window]
    cooldown = state.get("cooldown_until", 0.0)
    if cooldown > now:
        return False, cooldown - now
    if max_concurrency and len(state["holders"]) >= max_concurrency:
        return False, 0.0
    if rpm and len(state["requests"]) >= rpm:
        return False, state["requests"][-rpm] + window - now
    if tpm and state["tokens"]:
        used = sum(e[1] for e in state["tokens"])
        if used + tokens > tpm:
            freed, wait = used, 0.0
            for stamp, count, _ in state["tokens"]:
                freed -= count
                wait = stamp + window - now
                if freed + tokens <= tpm:
                    break
            return False, max(wait, 0.01)
    state["holders"][holder] = now + limits.lease_seconds
    if rpm:
        state["requests"].append(now)
    if tpm:
        state["tokens"].append([now, tokens, holder])
    return True, 0.0


def _learn(state, rpm, tpm, used, now, window, until):
    """Keep the provider's limits; add to the window what the provider says is used beyond it."""
    state["learned"] = {"rpm": int(rpm or 0), "tpm": int(tpm or 0), "until": until}
    used_requests, used_tokens = used or (None, None)
    requests = [t for t in state.get("requests", []) if t > now - window]
    tokens = [e for e in state.get("tokens", []) if e[0] > now - window]
    if rpm and used_requests is not None and used_requests > len(requests):
        requests.extend([now] * min(int(used_requests) - len(requests), int(rpm)))
    counted = sum(e[1] for e in tokens)
    if tpm and used_tokens is not None and used_tokens > counted:
        tokens.append([now, min(int(used_tokens) - counted, int(tpm)), f"provider:{uuid.uuid4().hex}"])
    state["requests"], state["tokens"] = requests, tokens


def _settle(state, limits, holder, actual_tokens, now):
    state.get("holders", {}).pop(holder, None)
    if actual_tokens is not None:
        for entry in state.get("tokens", []):
            if entry[2] == holder:
                entry[1] = actual_tokens
        cap = state.get("cap")
        if cap:
            cap["value"] += 1.0 / max(cap["value"], 1.0)
            cap["until"] = now + CAP_TTL
            if not limits.max_concurrency or cap["value"] >= limits.max_concurrency:
                state.pop("cap", None)


def _throttle(state, limits, seconds, now):
    """A 429: pause `seconds`, and halve the concurrency cap (once per CUT_SECONDS)."""
    if seconds > 0:
        state["cooldown_until"] = max(state.get("cooldown_until", 0.0), now + seconds)
    cap = state.get("cap") or {}
    if now - cap.get("cut_at", float("-inf")) < CUT_SECONDS:
        return
    holders = sum(1 for expiry in state.get("holders", {}).values() if expiry > now)
    current = min(cap.get("value", float("inf")), limits.max_concurrency or float("inf"), holders + 1)
    state["cap"] = {"value": float(max(1, int(current) // 2)), "cut_at": now, "until": now + CAP_TTL}


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
            _settle(state, limits, holder, actual_tokens, time.time())

    def throttle(self, limits, seconds):
        with self._state(limits.key) as state:
            _throttle(state, limits, seconds, time.time())

    def cooldown(self, limits, seconds):
        with self._state(limits.key) as state:
            state["cooldown_until"] = max(state.get("cooldown_until", 0.0), time.time() + seconds)

    def learn(self, limits, rpm, tpm, ttl=LEARNED_TTL, used=None):
        """The provider's per-minute limits (0: not said), kept `ttl` seconds; `used`: the
        (requests, tokens) it says are used, counted in the window where they exceed it."""
        with self._state(limits.key) as state:
            now = time.time()
            _learn(state, rpm, tpm, used, now, limits.window, now + ttl)


_ACQUIRE_LUA = """
local holders, reqs, toks, tokn, cool, learned = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local holder = ARGV[1]
local maxc, rpm, tpm = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local tokens, lease, window = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local said = redis.call('HMGET', learned, 'rpm', 'tpm')
local function ceiling(typed, got)
  got = tonumber(got) or 0
  if got > 0 and (typed <= 0 or got < typed) then return got end
  return typed
end
rpm, tpm = ceiling(rpm, said[1]), ceiling(tpm, said[2])
maxc = ceiling(maxc, math.floor(tonumber(redis.call('HGET', KEYS[7], 'value') or '0')))
redis.call('ZREMRANGEBYSCORE', holders, '-inf', now)
redis.call('ZREMRANGEBYSCORE', reqs, '-inf', now - window)
local old = redis.call('ZRANGEBYSCORE', toks, '-inf', now - window)
for _, member in ipairs(old) do redis.call('HDEL', tokn, member) end
redis.call('ZREMRANGEBYSCORE', toks, '-inf', now - window)
local until_ = tonumber(redis.call('GET', cool) or '0')
if until_ > now then return {0, tostring(until_ - now)} end
if maxc > 0 and redis.call('ZCARD', holders) >= maxc then return {0, '0'} end
local sent = redis.call('ZCARD', reqs)
if rpm > 0 and sent >= rpm then
  local first = redis.call('ZRANGE', reqs, sent - rpm, sent - rpm, 'WITHSCORES')
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
for i = 1, 5 do redis.call('EXPIRE', KEYS[i], math.ceil(window + lease)) end
return {1, '0'}
"""

_RELEASE_LUA = """
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[2] ~= '' then
  if redis.call('HEXISTS', KEYS[4], ARGV[1]) == 1 then redis.call('HSET', KEYS[4], ARGV[1], ARGV[2]) end
  local cap = tonumber(redis.call('HGET', KEYS[7], 'value') or '0')
  if cap > 0 then
    cap = cap + 1 / math.max(cap, 1)
    local maxc = tonumber(ARGV[3])
    if maxc <= 0 or cap >= maxc then
      redis.call('DEL', KEYS[7])
    else
      redis.call('HSET', KEYS[7], 'value', tostring(cap))
      redis.call('EXPIRE', KEYS[7], math.ceil(tonumber(ARGV[4])))
    end
  end
end
return 1
"""

_THROTTLE_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local seconds, maxc, cut_every, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if seconds > 0 then
  local until_ = now + seconds
  local current = tonumber(redis.call('GET', KEYS[5]) or '0')
  if until_ > current then redis.call('SET', KEYS[5], tostring(until_), 'EX', math.ceil(seconds) + 1) end
end
local cut_at = tonumber(redis.call('HGET', KEYS[7], 'cut_at') or '-1e18')
if now - cut_at < cut_every then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local current = redis.call('ZCARD', KEYS[1]) + 1
local cap = tonumber(redis.call('HGET', KEYS[7], 'value') or '0')
if cap > 0 and cap < current then current = cap end
if maxc > 0 and maxc < current then current = maxc end
redis.call('HSET', KEYS[7], 'value', tostring(math.max(1, math.floor(math.floor(current) / 2))), 'cut_at', tostring(now))
redis.call('EXPIRE', KEYS[7], math.ceil(ttl))
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


_LEARN_LUA = """
local reqs, toks, tokn, learned = KEYS[2], KEYS[3], KEYS[4], KEYS[6]
local rpm, tpm, ttl, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local used_requests, used_tokens, tag = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
redis.call('HSET', learned, 'rpm', rpm, 'tpm', tpm)
redis.call('EXPIRE', learned, math.ceil(ttl))
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
if rpm > 0 and used_requests then
  redis.call('ZREMRANGEBYSCORE', reqs, '-inf', now - window)
  local missing = math.min(used_requests - redis.call('ZCARD', reqs), rpm)
  for i = 1, missing do redis.call('ZADD', reqs, now, tag .. ':' .. i) end
  redis.call('EXPIRE', reqs, math.ceil(window) + 1)
end
if tpm > 0 and used_tokens then
  local old = redis.call('ZRANGEBYSCORE', toks, '-inf', now - window)
  for _, member in ipairs(old) do redis.call('HDEL', tokn, member) end
  redis.call('ZREMRANGEBYSCORE', toks, '-inf', now - window)
  local counted = 0
  for _, v in ipairs(redis.call('HVALS', tokn)) do counted = counted + tonumber(v) end
  if used_tokens > counted then
    redis.call('ZADD', toks, now, tag)
    redis.call('HSET', tokn, tag, math.min(used_tokens - counted, tpm))
    redis.call('EXPIRE', toks, math.ceil(window) + 1)
    redis.call('EXPIRE', tokn, math.ceil(window) + 1)
  end
end
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
        self._learn = client.register_script(_LEARN_LUA)
        self._throttle = client.register_script(_THROTTLE_LUA)

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
        return [f"{base}:holders", f"{base}:requests", f"{base}:tokens", f"{base}:token-counts", f"{base}:cooldown",
                f"{base}:learned", f"{base}:cap"]

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
        self._release(keys=self._keys(limits.key), args=[
            holder, "" if actual_tokens is None else int(actual_tokens), limits.max_concurrency or 0, CAP_TTL])

    def throttle(self, limits, seconds):
        self._throttle(keys=self._keys(limits.key), args=[float(seconds), limits.max_concurrency or 0, CUT_SECONDS,
                                                          CAP_TTL])

    def cooldown(self, limits, seconds):
        self._cooldown(keys=self._keys(limits.key), args=[float(seconds)])

    def learn(self, limits, rpm, tpm, ttl=LEARNED_TTL, used=None):
        used_requests, used_tokens = used or (None, None)
        self._learn(keys=self._keys(limits.key), args=[
            int(rpm or 0), int(tpm or 0), float(ttl), limits.window,
            "" if used_requests is None else int(used_requests), "" if used_tokens is None else int(used_tokens),
            f"provider:{uuid.uuid4().hex}",
        ])
