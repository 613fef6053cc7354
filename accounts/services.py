from django.contrib.auth.models import Group, User
from django.db import transaction

from .roles import ROLES


def ensure_role_groups():
    return {name: Group.objects.get_or_create(name=name)[0] for name in ROLES}


@transaction.atomic
def create_user_with_role(username, password, role, *, email=""):
    """Create (or reset) a user holding exactly one role."""
    groups = ensure_role_groups()
    user, _ = User.objects.get_or_create(username=username, defaults={"email": email})
    user.set_password(password)
    user.is_staff = role == "admin"
    user.save()
    user.groups.set([groups[role]])
    return user
