"""Reading objects of the storage layer as streams, and streaming them to a browser.

`default_storage.open()` of django-storages' S3 backend first downloads the whole object into a
temporary file (memory, then disk past a few MB). A large export zip or a staged import must not be
copied like that: `open_stream` reads an S3 object straight from the GET response's body, block by
block, through the storage's own boto3 connection (bucket, location prefix and credentials as the
storage names them); any other storage (the local folder) opens the file as usual.
"""
import io

from django.core.files.storage import default_storage
from django.http import FileResponse

STREAM_BLOCK = 1024 * 1024


class StoredStream(io.RawIOBase):
    """A read-only, forward-only stream of a stored object (`size` bytes)."""

    def __init__(self, body, size):
        super().__init__()
        self._body = body
        self.size = size

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self._body.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self):
        if not self.closed:
            self._body.close()
        super().close()


def _s3_stream(storage, name):
    from botocore.exceptions import ClientError
    from storages.utils import clean_name

    key = storage._normalize_name(clean_name(name))  # the backend's own key (location prefix included)
    try:
        answer = storage.bucket.Object(key).get()
    except ClientError as exc:
        if exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 404:
            raise FileNotFoundError(f"No stored object {name!r}") from exc
        raise
    return StoredStream(answer["Body"], answer["ContentLength"])


def open_stream(name, storage=None):
    """The stored file `name` open for reading in binary, as a stream (FileNotFoundError if absent).
    From S3 the stream cannot seek: a reader that reads twice copies it first (a staged import)."""
    storage = storage or default_storage
    try:
        from storages.backends.s3 import S3Storage
    except ImportError:  # django-storages without boto3: no S3 storage can be configured
        S3Storage = None
    if S3Storage is not None and isinstance(storage, S3Storage):  # a lazy default_storage is set up by isinstance
        return _s3_stream(storage, name)
    return storage.open(name, "rb")


def stream_response(stream, filename="", *, as_attachment=True, content_type=None):
    """A download (an attachment, or shown inline: a page image) of an open stream, read in blocks
    of STREAM_BLOCK; its length is sent when known (a local file, or an S3 object's size)."""
    response = FileResponse(stream, as_attachment=as_attachment, filename=filename, content_type=content_type)
    response.block_size = STREAM_BLOCK
    size = getattr(stream, "size", None)
    if "Content-Length" not in response and isinstance(size, int):
        response["Content-Length"] = str(size)
    return response
