from django.conf import settings
from django.contrib.auth.views import redirect_to_login

OPEN_PREFIXES = ("/accounts/login/", "/static/", "/healthz", "/favicon.ico")


class LoginRequiredMiddleware:
    """Every page needs a login, except the login page, static files and the health check.

    The API answers 401/403 itself (DRF), so it is left to its permission classes.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        path = request.path
        if (
            request.user.is_authenticated
            or path.startswith(OPEN_PREFIXES)
            or (path.startswith("/api/") and not path.startswith("/api/docs/"))
            or path.startswith("/" + settings.STATIC_URL.lstrip("/"))
        ):
            return self.get_response(request)
        return redirect_to_login(request.get_full_path())
