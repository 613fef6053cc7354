from tests.s3_server import s3_bucket, s3_server  # noqa: F401 (the S3 test server fixtures)
