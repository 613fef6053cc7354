import pytest


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Users are made per test; the default hasher's deliberate slowness only costs test time here."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
