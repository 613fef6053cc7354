from django.utils.translation import gettext_lazy as _

from .roles import ADMIN, REVIEWER, has_role, user_role

ROLE_LABELS = {"annotator": _("annotator"), "reviewer": _("reviewer"), "admin": _("admin"), None: _("no role")}


def role(request):
    user = getattr(request, "user", None)
    return {
        "user_role": user_role(user),
        "user_role_label": ROLE_LABELS.get(user_role(user), user_role(user)),
        "is_reviewer": bool(user) and has_role(user, REVIEWER),
        "is_admin": bool(user) and has_role(user, ADMIN),
    }
