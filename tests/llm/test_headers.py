"""Reading a provider's rate-limit headers (llm/headers.py): durations, counts, bad values."""
import httpx2
import pytest

from llm import headers
from tests.llm_limits import format_duration


@pytest.mark.parametrize("text, seconds", [
    ("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0s", 0.0), ("1.5s", 1.5),
    ("0.5", 0.5), ("2", 2.0), (" 17ms ", 0.017), ("1m30s", 90.0), ("1.5\u00b5s", 1.5e-6), ("250us", 2.5e-4),
    ("100ns", 1e-7), ("2h", 7200.0), ("1m", 60.0), ("1M", 60.0), (".5s", 0.5), ("7m12s", 432.0),
])
def test_durations_in_go_and_plain_seconds(text, seconds):
    assert headers.parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", [
    "", "   ", "soon", "-1s", "-5", "1s2", "5d", "s", "ms", "1 s", "1s 2m", "nan", "inf", "1e3", "\u00b2s",
    "\u0663s", "1..2s", "1,5s", "0x10", None, 5, b"1s",
])
def test_unreadable_durations_are_none(text):
    assert headers.parse_duration(text) is None


@pytest.mark.parametrize("text, count", [("600", 600), ("0", 0), (" 198200 ", 198200), ("600.0", 600)])
def test_counts(text, count):
    assert headers.parse_count(text) == count


@pytest.mark.parametrize("text", ["", "-1", "1.5", "lots", "\u0666\u0660\u0660", "1e6", "9" * 20, None, 600])
def test_unreadable_counts_are_none(text):
    assert headers.parse_count(text) is None


@pytest.mark.parametrize("seconds", [0.02, 0.5, 1.0, 1.5, 59.25, 360.0, 3723.5])
def test_the_loopback_servers_durations_read_back(seconds):
    assert headers.parse_duration(format_duration(seconds)) == pytest.approx(seconds, abs=1e-3)


def test_a_full_set_of_headers_on_httpx_headers_any_case():
    said = headers.read_limits(httpx2.Headers({
        "X-RateLimit-Limit-Requests": "600", "x-ratelimit-limit-tokens": "200000",
        "x-ratelimit-remaining-requests": "599", "x-ratelimit-remaining-tokens": "198200",
        "x-ratelimit-reset-requests": "100ms", "x-ratelimit-reset-tokens": "540ms", "Retry-After": "2",
    }))
    assert said == headers.ProviderLimits(600, 200_000, 599, 198_200, 0.1, 0.54, 2.0)
    assert said.says_limits and said.pause_for(1800) == 0.0 and said.retry_wait() == 2.0


def test_bad_values_are_ignored_one_by_one():
    said = headers.read_limits({
        "x-ratelimit-limit-requests": "lots", "x-ratelimit-limit-tokens": "-5",
        "x-ratelimit-remaining-requests": "0", "x-ratelimit-remaining-tokens": "1.5",
        "x-ratelimit-reset-requests": "soon", "x-ratelimit-reset-tokens": "3s", "retry-after": "whenever",
        "retry-after-ms": "NaN",
    })
    assert said == headers.ProviderLimits(remaining_requests=0, reset_tokens=3.0)
    assert not said.says_limits
    assert said.retry_wait() is None  # the request budget is spent, but its reset is unreadable
    assert said.pause_for(0) == 1.0  # spent, with no rate or reset known: a second
    assert headers.read_limits({}) == headers.ProviderLimits() == headers.read_limits(None)
    assert headers.read_limits({"x-ratelimit-limit-requests": "0"}).says_limits is False


def test_what_is_left_paces_the_next_call():
    # 180 tokens left of 200,000 per minute: 1,620 more refill in 1620 * 60 / 200000 s.
    said = headers.read_limits({"x-ratelimit-limit-tokens": "200000", "x-ratelimit-remaining-tokens": "180",
                                "x-ratelimit-reset-tokens": "59s"})
    assert said.pause_for(1800) == pytest.approx(0.486)
    assert said.pause_for(100) == 0.0
    # A reset shorter than the refill time bounds it.
    said = headers.read_limits({"x-ratelimit-limit-requests": "10", "x-ratelimit-remaining-requests": "0",
                                "x-ratelimit-reset-requests": "2s"})
    assert said.pause_for() == 2.0 and said.retry_wait() == 2.0
    said = headers.read_limits({"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "0",
                                "x-ratelimit-reset-requests": "6m0s"})
    assert said.pause_for() == pytest.approx(0.1) and said.retry_wait() == headers.MAX_RETRY_AFTER


def test_retry_after_forms():
    assert headers.parse_retry_after({"retry-after": "3"}) == 3.0
    assert headers.parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert headers.parse_retry_after({"retry-after-ms": "x", "retry-after": "9"}) == 9.0
    assert headers.parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert headers.parse_retry_after({"retry-after": "99999"}) == headers.MAX_RETRY_AFTER
    for bad in ("soon", "-3", "", "Wed, 99 Foo"):
        assert headers.parse_retry_after({"retry-after": bad}) is None
