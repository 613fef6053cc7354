"""Views of the accounts app (login and logout are Django's own)."""
from django.contrib.auth import views as auth_views

from .forms import ThrottledPasswordChangeForm


class PasswordChangeView(auth_views.PasswordChangeView):
    """Change one's password; wrong old passwords count towards the login lockout."""

    form_class = ThrottledPasswordChangeForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "request": self.request}
