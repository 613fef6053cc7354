"""Helpers of the dataset page tests: the number of queries a page takes."""
from django.db import connection
from django.test.utils import CaptureQueriesContext


def count_queries(client, url):
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


from tests.s3_server import s3_bucket, s3_server  # noqa: E402, F401 (the S3 test server fixtures)
