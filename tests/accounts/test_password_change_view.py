"""Changing one's password (accounts.views.PasswordChangeView, /accounts/password/): logged-in
users only; the right old password changes it, a wrong one is the form's error and counts as a
failed login (django-axes)."""
import pytest
from axes.models import AccessAttempt
from django.urls import reverse

from accounts.services import set_user_language
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db
URL = reverse("password_change")
NEW = "another-long-password-42"


def test_anonymous_users_go_to_the_login_page(client):
    answer = client.get(URL)
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]


def test_the_form_renders_for_any_role(annotator_client):
    page = annotator_client.get(URL)
    html = page.content.decode()
    assert page.status_code == 200 and 'name="old_password"' in html and 'name="new_password1"' in html


def test_labels_end_with_the_languages_colon(annotator_client, annotator):
    """"Old password:" in English, "旧密码：" in Chinese (issue 39): Django's label suffix ":" is
    translated in our catalogue (core/forms.py), for every form."""
    assert "Old password:</label>" in annotator_client.get(URL).content.decode()
    set_user_language(annotator, "zh-hans")
    html = annotator_client.get(URL).content.decode()
    assert "旧密码：</label>" in html and "新密码确认：</label>" in html and "密码:" not in html


def test_the_right_old_password_changes_it(annotator_client, annotator):
    answer = annotator_client.post(URL, {"old_password": PASSWORD, "new_password1": NEW, "new_password2": NEW})
    assert answer.status_code == 302 and answer["Location"] == reverse("password_change_done")
    annotator.refresh_from_db()
    assert annotator.check_password(NEW)


def test_a_wrong_old_password_is_refused_and_counted(annotator_client, annotator):
    answer = annotator_client.post(URL, {"old_password": "wrong", "new_password1": NEW, "new_password2": NEW})
    assert answer.status_code == 200 and "old_password" in answer.context["form"].errors
    annotator.refresh_from_db()
    assert annotator.check_password(PASSWORD)
    assert AccessAttempt.objects.filter(username=annotator.username).get().failures_since_start == 1


def test_mismatched_new_passwords_are_the_forms_error(annotator_client, annotator):
    answer = annotator_client.post(URL, {"old_password": PASSWORD, "new_password1": NEW, "new_password2": NEW + "x"})
    assert answer.status_code == 200 and "new_password2" in answer.context["form"].errors
    annotator.refresh_from_db()
    assert annotator.check_password(PASSWORD)
