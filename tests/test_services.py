"""The configured services are really used. In CI (REALMATH_REQUIRE_SERVICES=1) they must be up."""
import os

import pytest
from django.conf import settings
from django.db import connection

REQUIRED = os.environ.get("REALMATH_REQUIRE_SERVICES") == "1"


def test_database_matches_configuration(db):
    expected = "postgresql" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite"
    assert connection.vendor == expected


def test_broker_is_reachable():
    from config.celery import app

    with app.connection_for_write() as conn:
        try:
            conn.ensure_connection(max_retries=2, timeout=5)
        except Exception as exc:  # noqa: BLE001 - any failure to connect is the finding
            if REQUIRED:
                pytest.fail(f"broker {settings.CELERY_BROKER_URL} unreachable: {exc}")
            pytest.skip(f"broker unreachable: {exc}")
        assert conn.connected


@pytest.mark.skipif(not os.environ.get("RABBITMQ_URL") and not REQUIRED, reason="RABBITMQ_URL not set")
def test_rabbitmq_is_reachable():
    from kombu import Connection

    with Connection(os.environ["RABBITMQ_URL"], connect_timeout=5) as conn:
        conn.ensure_connection(max_retries=2)
        assert conn.connected


@pytest.mark.skipif(not settings.REDIS_URL and not REQUIRED, reason="REDIS_URL not set")
def test_redis_cache_is_reachable():
    from django.core.cache import cache

    cache.set("realmath-ping", "pong", 10)
    assert cache.get("realmath-ping") == "pong"
