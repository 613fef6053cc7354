"""WSGI entry point."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Warm-up of the web process, paid once when gunicorn starts (`--preload`: once in the master,
# shared by its workers), not by a person's first page: the URL configuration imports every view
# (and through them SymPy, DRF, ...; about 2 s), and the metrics page and the methods report need
# scipy.stats (about 1 s more).
from django.urls import get_resolver  # noqa: E402

_views = get_resolver().url_patterns  # imports every view module
import scipy.stats  # noqa: E402,F401
