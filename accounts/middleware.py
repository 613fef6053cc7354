from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.utils import translation

from .selectors import stored_language

OPEN_PREFIXES = ("/accounts/login/", "/accounts/language/", "/i18n/", "/static/", "/healthz", "/favicon.ico")


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


class UserLanguageMiddleware:
    """A logged-in user's stored language wins over the cookie and the browser's Accept-Language.

    Runs after AuthenticationMiddleware and after LocaleMiddleware, which has already chosen the
    language of the request (cookie, Accept-Language, LANGUAGE_CODE); a user with no stored
    choice keeps that one.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        language = stored_language(user) if user is not None and user.is_authenticated else ""
        if language and language != getattr(request, "LANGUAGE_CODE", None):
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)
