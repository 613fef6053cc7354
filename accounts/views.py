"""Views of the accounts app (logout is Django's own; login is Django's plus the login page's language)."""
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views import i18n as i18n_views
from django.views.decorators.http import require_http_methods

from . import selectors, services
from .decorators import annotator_required
from .forms import ThrottledPasswordChangeForm
from .services import set_user_language


class PasswordChangeView(auth_views.PasswordChangeView):
    """Change one's password; wrong old passwords count towards the login lockout."""

    form_class = ThrottledPasswordChangeForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "request": self.request}


@require_http_methods(["GET", "POST"])
def set_language(request):
    """The language menu (and the login page's choice): Django's set_language, which sets the
    cookie and redirects back, plus the choice stored on a logged-in user so that it follows her
    to every session and machine. A choice made on the login page is kept in the session and
    stored on the account at login (`LoginView`): it wins over the account's earlier choice.

    GET changes nothing: it is where the menu's links lead without scripts, a page with the one
    button that posts the choice."""
    if request.method == "GET":
        language = request.GET.get("language", "")
        if language not in dict(settings.LANGUAGES):
            return HttpResponseBadRequest(_("Unknown language."))
        next_url = request.GET.get("next", "")
        if not url_has_allowed_host_and_scheme(next_url, {request.get_host()}, request.is_secure()):
            next_url = "/"
        return render(request, "registration/language_confirm.html", {"language": language, "next": next_url})
    language = request.POST.get("language", "")
    response = i18n_views.set_language(request)
    if language in dict(settings.LANGUAGES):
        if request.user.is_authenticated:
            set_user_language(request.user, language)
        else:
            request.session[LOGIN_PAGE_LANGUAGE] = language
    return response


LOGIN_PAGE_LANGUAGE = "login_page_language"


class LoginView(auth_views.LoginView):
    """Django's login, plus: a language chosen on the login page (kept in the session by
    `set_language`) is stored on the account, so it is the one the next pages are in; without
    such a choice the account's stored language applies (UserLanguageMiddleware)."""

    def form_valid(self, form):
        language = self.request.session.pop(LOGIN_PAGE_LANGUAGE, "")
        response = super().form_valid(form)
        if language in dict(settings.LANGUAGES):
            set_user_language(self.request.user, language)
        return response

@annotator_required
def profile(request):
    """One's own account page (the user name in the header leads here): name, role, language,
    password, and the API token, made (an older one stops working) or revoked. The key is shown
    once, in the answer to the POST that made it; afterwards only when it was made."""
    new_token = None
    if request.method == "POST":
        if request.POST.get("action") == "create":
            new_token = services.renew_api_token(request.user)
        elif request.POST.get("action") == "revoke":
            if services.revoke_api_token(request.user):
                messages.success(request, _("Your API token was revoked: it no longer works."))
            return redirect("profile")
        else:
            return HttpResponseBadRequest(_("Unknown action."))
    token = selectors.api_token_of(request.user)
    return render(request, "accounts/profile.html", {"token": token, "new_token": new_token})
