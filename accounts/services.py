from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.db import transaction
from django.utils.translation import gettext
from rest_framework.authtoken.models import Token

from .models import Preference
from .roles import ADMIN, ROLES

# Admins see login lockouts (django-axes) in the Django admin and unlock by deleting them.
ADMIN_PERMISSIONS = (
    ("axes", "view_accessattempt"),
    ("axes", "delete_accessattempt"),
    ("axes", "view_accesslog"),
    ("axes", "view_accessfailurelog"),
)


def ensure_role_groups() -> dict[str, Group]:
    groups = {name: Group.objects.get_or_create(name=name)[0] for name in ROLES}
    for app_label, codename in ADMIN_PERMISSIONS:
        permission = Permission.objects.filter(content_type__app_label=app_label, codename=codename).first()
        if permission is not None:
            groups[ADMIN].permissions.add(permission)
    return groups


@transaction.atomic
def create_user_with_role(username: str, password: str, role: str, *, email: str = "") -> User:
    """Create (or reset) a user holding exactly one role."""
    groups = ensure_role_groups()
    user, _ = User.objects.get_or_create(username=username, defaults={"email": email})
    user.set_password(password)
    user.is_staff = role == "admin"
    user.save()
    user.groups.set([groups[role]])
    return user


def set_user_language(user: User, language: str) -> None:
    """Store the interface language a user chose; it applies on every later request and login."""
    if language not in dict(settings.LANGUAGES):
        raise ValueError(gettext("unknown language %(language)s") % {"language": repr(language)})
    Preference.objects.update_or_create(user=user, defaults={"language": language})
    user._realmath_language = language

@transaction.atomic
def renew_api_token(user: User):
    """A new API token for `user` (an older one stops working). Returns it: its key is shown
    to the person once, on the page that made it."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def revoke_api_token(user: User) -> bool:
    """Delete `user`'s API token; True if there was one."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)
