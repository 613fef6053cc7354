"""Views of the accounts app (login and logout are Django's own)."""
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.views import i18n as i18n_views
from django.views.decorators.http import require_POST

from .forms import ThrottledPasswordChangeForm
from .services import set_user_language


class PasswordChangeView(auth_views.PasswordChangeView):
    """Change one's password; wrong old passwords count towards the login lockout."""

    form_class = ThrottledPasswordChangeForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "request": self.request}


@require_POST
def set_language(request):
    """The language menu (and the login page's choice): Django's set_language, which sets the
    cookie and redirects back, plus the choice stored on a logged-in user so that it follows her
    to every session and machine."""
    language = request.POST.get("language", "")
    response = i18n_views.set_language(request)
    if language in dict(settings.LANGUAGES) and request.user.is_authenticated:
        set_user_language(request.user, language)
    return response
