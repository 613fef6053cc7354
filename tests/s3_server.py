"""An S3-compatible server on 127.0.0.1 (moto's server mode) for the object-storage tests, and the
settings that point the app's file storage at a fresh bucket of it."""
import socket
import uuid

import pytest


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def s3_server():
    moto_server = pytest.importorskip("moto.server")
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


KEYS = {"access_key": "test-access", "secret_key": "test-secret"}


@pytest.fixture
def s3_bucket(s3_server, settings, monkeypatch):
    """A new bucket, and the default storage moved to it (as REALMATH_STORAGE=s3 does)."""
    boto3 = pytest.importorskip("boto3")
    name = f"realmath-{uuid.uuid4().hex[:12]}"
    client = boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1",
                          aws_access_key_id=KEYS["access_key"], aws_secret_access_key=KEYS["secret_key"])
    client.create_bucket(Bucket=name)
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {
            "bucket_name": name, "endpoint_url": s3_server, "region_name": "us-east-1", "default_acl": None,
            "file_overwrite": False, "querystring_auth": True, **KEYS}},
    }
    return client, name
