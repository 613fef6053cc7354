from .roles import ADMIN, REVIEWER, has_role, user_role


def role(request):
    user = getattr(request, "user", None)
    return {
        "user_role": user_role(user),
        "is_reviewer": bool(user) and has_role(user, REVIEWER),
        "is_admin": bool(user) and has_role(user, ADMIN),
    }
