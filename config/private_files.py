"""
Files only the app's own user may read: the generated secret key and the SQLite database.

Used by config/settings.py before anything opens these files, so they are created with mode
0600 rather than tightened after the fact (no window in which another user can open them).
"""
import os
import secrets
import tempfile
from pathlib import Path

PRIVATE_MODE = 0o600


def ensure_private_file(path):
    """Create `path` empty with mode 0600, or take group/other access away from an existing one.

    An empty file is a valid new SQLite database; SQLite creates its -wal and -shm files with
    the mode of the database file. In-memory names (":memory:", "") are left alone.
    """
    if not path or str(path) == ":memory:" or str(path).startswith("file:"):
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE)
    except FileExistsError:
        _tighten(path)
    else:
        os.close(fd)


def read_or_create_secret(path, nbytes=50):
    """Return the secret stored in `path`, creating it (mode 0600) on first use.

    The new secret is written to a private temporary file and linked into place, so two
    processes starting at once agree on one key and never read a half-written file.
    """
    path = Path(path)
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret-")  # mkstemp creates 0600
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(nbytes))
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # another process won the race; use its key
        finally:
            os.unlink(tmp)
    _tighten(path)
    return path.read_text().strip()


def _tighten(path):
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        os.chmod(path, mode & 0o700)
