import pytest


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Users are made in nearly every test here; the default hasher is slow on purpose."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
