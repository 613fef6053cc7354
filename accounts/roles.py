"""
Roles are Django groups. They are ordered: an admin can do what a reviewer can,
and a reviewer what an annotator can. Superusers are admins.
"""
ANNOTATOR = "annotator"
REVIEWER = "reviewer"
ADMIN = "admin"
ROLES = (ANNOTATOR, REVIEWER, ADMIN)
_RANK = {None: 0, ANNOTATOR: 1, REVIEWER: 2, ADMIN: 3}


def user_role(user):
    """Return the highest role of a user, or None."""
    if not user or not user.is_authenticated:
        return None
    cached = getattr(user, "_realmath_role", "unset")
    if cached != "unset":
        return cached
    if user.is_superuser:
        role = ADMIN
    else:
        names = set(user.groups.values_list("name", flat=True))
        role = next((r for r in reversed(ROLES) if r in names), None)
    user._realmath_role = role
    return role


def has_role(user, role):
    return _RANK[user_role(user)] >= _RANK[role]


def is_reviewer(user):
    return has_role(user, REVIEWER)


def is_admin(user):
    return has_role(user, ADMIN)
