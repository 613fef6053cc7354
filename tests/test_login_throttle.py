"""Login throttling (django-axes): per username and per address, refused before any password
hash is computed, logged, and unlocked by an admin."""
import logging
from datetime import timedelta
from unittest import mock

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.hashers import MD5PasswordHasher
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from accounts.services import create_user_with_role

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
LIMIT = 5


@pytest.fixture(autouse=True)
def _fast_hashes(settings):
    # The throttle is what is under test, not PBKDF2's cost; users below are created after this.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.AXES_FAILURE_LIMIT = LIMIT


def attempt(username, password, address="10.0.0.1", client=None):
    client = client or Client()
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(response):
    return response.status_code == 302 and "_auth_user_id" in response.client.session


def test_right_password_works_until_the_limit(annotator):
    for _ in range(LIMIT - 1):
        assert attempt(annotator.username, "wrong").status_code == 200
    assert logged_in(attempt(annotator.username, PASSWORD))


def test_user_locked_after_failures_from_many_addresses(annotator):
    """No single address reaches the limit: the username does, and the right password is refused."""
    for n in range(LIMIT):
        attempt(annotator.username, "wrong", address=f"10.0.1.{n}")
    response = attempt(annotator.username, PASSWORD, address="10.0.2.1")
    assert response.status_code == 429
    assert not logged_in(response)
    assert b"Too many login attempts" in response.content
    # Another user is not affected.
    other = create_user_with_role("other", PASSWORD, "annotator")
    assert logged_in(attempt(other.username, PASSWORD, address="10.0.2.1"))


def test_address_locked_after_failures_on_many_usernames(annotator):
    """Guessing a different username each time: the address is locked, even for a right password."""
    for n in range(LIMIT):
        attempt(f"guess{n}", "wrong", address="10.0.3.3")
    assert attempt(annotator.username, PASSWORD, address="10.0.3.3").status_code == 429
    # The same user from another address is fine: no username reached the limit.
    assert logged_in(attempt(annotator.username, PASSWORD, address="10.0.3.4"))


def test_locked_attempt_is_refused_before_any_password_hash(annotator):
    verify = mock.patch.object(MD5PasswordHasher, "verify", autospec=True, side_effect=MD5PasswordHasher.verify)
    encode = mock.patch.object(MD5PasswordHasher, "encode", autospec=True, side_effect=MD5PasswordHasher.encode)
    with verify as verified, encode as encoded:
        attempt(annotator.username, "wrong")
        assert verified.call_count == 1  # an ordinary failure does hash
        for _ in range(LIMIT - 1):
            attempt(annotator.username, "wrong")
        verified.reset_mock()
        encoded.reset_mock()
        for password in (PASSWORD, "wrong", "another"):
            assert attempt(annotator.username, password).status_code == 429
        assert attempt("no-such-user", "x").status_code == 429  # the address is locked too
    assert verified.call_count == 0 and encoded.call_count == 0


def test_lockout_ends_after_the_cool_off(annotator, settings):
    for _ in range(LIMIT):
        attempt(annotator.username, "wrong")
    assert attempt(annotator.username, PASSWORD).status_code == 429
    # Refusals during the lockout do not extend it: the last recorded failure stays the 5th.
    assert AccessAttempt.objects.get().failures_since_start == LIMIT
    AccessAttempt.objects.update(attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1))
    assert logged_in(attempt(annotator.username, PASSWORD))


def test_lockout_is_logged_with_username_and_address(annotator, caplog):
    with caplog.at_level(logging.WARNING):
        for _ in range(LIMIT):
            attempt(annotator.username, "wrong", address="10.0.4.4")
        attempt(annotator.username, PASSWORD, address="10.0.4.4")
    lines = [r.getMessage() for r in caplog.records if r.name == "accounts.security"]
    assert len(lines) == 2  # when locked, and the refused attempt after
    assert all(f"username='{annotator.username}'" in line and "address=10.0.4.4" in line for line in lines)
    assert all("wrong" not in r.getMessage() and PASSWORD not in r.getMessage() for r in caplog.records)


def test_admin_unlocks_in_the_django_admin(annotator, admin_user):
    for _ in range(LIMIT):
        attempt(annotator.username, "wrong")
    assert attempt(annotator.username, PASSWORD).status_code == 429
    admin = Client()
    admin.force_login(admin_user)
    listing = admin.get("/admin/axes/accessattempt/")
    assert listing.status_code == 200 and annotator.username in listing.content.decode()
    lock = AccessAttempt.objects.get()
    response = admin.post(f"/admin/axes/accessattempt/{lock.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert logged_in(attempt(annotator.username, PASSWORD))


def test_admin_role_without_superuser_can_unlock(annotator):
    staff_admin = create_user_with_role("staffadmin", PASSWORD, "admin")
    assert not staff_admin.is_superuser
    for _ in range(LIMIT):
        attempt(annotator.username, "wrong")
    client = Client()
    client.force_login(staff_admin)
    lock = AccessAttempt.objects.get()
    assert client.get("/admin/axes/accessattempt/").status_code == 200
    assert client.post(f"/admin/axes/accessattempt/{lock.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not AccessAttempt.objects.exists()


def test_reviewer_cannot_see_or_clear_lockouts(reviewer_client, annotator):
    for _ in range(LIMIT):
        attempt(annotator.username, "wrong")
    assert reviewer_client.get("/admin/axes/accessattempt/").status_code in (302, 403)
    assert AccessAttempt.objects.exists()


def test_axes_reset_command_unlocks(annotator):
    for _ in range(LIMIT):
        attempt(annotator.username, "wrong")
    call_command("axes_reset_username", annotator.username)
    assert logged_in(attempt(annotator.username, PASSWORD))


def test_django_admin_login_goes_through_the_throttle(annotator, admin_user):
    """The admin's own login form authenticates through the same backends."""
    for _ in range(LIMIT):
        attempt(admin_user.username, "wrong")
    client = Client()
    client.force_login(annotator)  # a logged-in non-staff user gets the admin login form
    response = client.post(
        "/admin/login/?next=/admin/", {"username": admin_user.username, "password": PASSWORD}, REMOTE_ADDR="10.0.5.5",
    )
    assert response.status_code == 429
    assert int(client.session["_auth_user_id"]) == annotator.pk


def test_api_takes_no_passwords(annotator):
    """The API authenticates by session or token only: Basic auth is no password-guessing path."""
    import base64

    credentials = base64.b64encode(f"{annotator.username}:{PASSWORD}".encode()).decode()
    response = Client().get("/api/questions/", HTTP_AUTHORIZATION=f"Basic {credentials}")
    assert response.status_code in (401, 403)


def test_address_behind_a_trusted_proxy_is_the_forwarded_one(annotator, settings):
    """With DJANGO_PROXY_COUNT=1 every request comes from the proxy: the client's own address
    (the right-most X-Forwarded-For entry) is what gets locked, not the proxy's."""
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.9.9.9"
    for n in range(LIMIT):
        Client().post(
            LOGIN, {"username": f"guess{n}", "password": "x"},
            REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=f"1.2.3.{n}, 203.0.113.7",  # spoofed left entry varies
        )
    locked = Client().post(
        LOGIN, {"username": annotator.username, "password": PASSWORD},
        REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="203.0.113.7",
    )
    assert locked.status_code == 429
    other = Client()
    response = other.post(
        LOGIN, {"username": annotator.username, "password": PASSWORD},
        REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="198.51.100.2",
    )
    assert logged_in(response)


PASSWORD_CHANGE = "/accounts/password/"


def change_password(client, old, new="a-new-long-password-42", address="10.0.6.6"):
    return client.post(PASSWORD_CHANGE, {"old_password": old, "new_password1": new, "new_password2": new},
                       REMOTE_ADDR=address)


def test_password_change_counts_wrong_old_passwords_and_locks(annotator):
    """A session (perhaps stolen) cannot guess the old password without limit: the guesses count
    as failed logins, then even the right old password is refused and so is a fresh login."""
    client = Client()
    client.force_login(annotator)
    for _ in range(LIMIT - 1):
        response = change_password(client, "wrong")
        assert response.status_code == 200 and b"old password was entered incorrectly" in response.content
    assert AccessAttempt.objects.get().failures_since_start == LIMIT - 1
    change_password(client, "wrong")
    locked = change_password(client, PASSWORD)
    assert locked.status_code == 429 and b"Too many login attempts" in locked.content
    annotator.refresh_from_db()
    assert annotator.check_password(PASSWORD)  # not changed
    assert attempt(annotator.username, PASSWORD, address="10.0.7.7").status_code == 429


def test_password_change_with_the_right_old_password_works(annotator):
    client = Client()
    client.force_login(annotator)
    response = change_password(client, PASSWORD)
    assert response.status_code == 302 and response.url == "/accounts/password/done/"
    annotator.refresh_from_db()
    assert annotator.check_password("a-new-long-password-42")


def test_the_security_doc_says_the_password_change_page_is_throttled():
    """docs/security.md once called the page unthrottled while the code above throttles it."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "security.md").read_text(encoding="utf-8")
    assert "/accounts/password/" in text and "ThrottledPasswordChangeForm" in text
    assert "password-change page checks the old password without the throttle" not in text
