"""Helpers of the dataset page tests: the number of queries a page takes."""
from django.db import connection
from django.test.utils import CaptureQueriesContext


def count_queries(client, url):
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)
