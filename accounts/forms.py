"""Forms of the accounts app."""
from django import forms
from django.contrib.auth import authenticate
from django.contrib.auth.forms import PasswordChangeForm


class ThrottledPasswordChangeForm(PasswordChangeForm):
    """Django's password change form, with the old password checked by `authenticate`.

    The authentication backends include django-axes, so a wrong old password counts as a failed
    login and the account locks as it does on the login page: a stolen session cannot be used
    to guess the password without limit.
    """

    def __init__(self, user, *args, request=None, **kwargs):
        self.request = request
        super().__init__(user, *args, **kwargs)

    def clean_old_password(self):
        old_password = self.cleaned_data["old_password"]
        if authenticate(self.request, username=self.user.get_username(), password=old_password) is None:
            raise forms.ValidationError(self.error_messages["password_incorrect"], code="password_incorrect")
        return old_password
