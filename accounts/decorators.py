from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext

from .roles import has_role


def role_required(role):
    """View decorator: login, then the given role (or a higher one)."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not has_role(request.user, role):
                raise PermissionDenied(gettext("This page needs the %(role)s role.") % {"role": role})
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


annotator_required = role_required("annotator")
reviewer_required = role_required("reviewer")
admin_required = role_required("admin")
