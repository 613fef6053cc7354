"""WSGI entry point."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Warm-up of the web process: the metrics page and the methods report need scipy.stats, whose
# first import takes about a second. Imported here, it is paid once when gunicorn starts
# (`--preload`: once in the master, shared by its workers), not by a person's first page.
import scipy.stats  # noqa: E402,F401
