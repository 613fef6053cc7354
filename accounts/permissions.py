from rest_framework.permissions import BasePermission

from .roles import ADMIN, ANNOTATOR, REVIEWER, has_role


class _RolePermission(BasePermission):
    role = None

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated and has_role(request.user, self.role))


class IsAnnotator(_RolePermission):
    role = ANNOTATOR


class IsReviewer(_RolePermission):
    role = REVIEWER


class ReadAnnotatorWriteReviewer(BasePermission):
    """Annotators may read; writing needs the reviewer role."""

    def has_permission(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return False
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return has_role(request.user, ANNOTATOR)
        return has_role(request.user, REVIEWER)


class ReadReviewerWriteAdmin(BasePermission):
    """Reviewers may read; writing needs the admin role."""

    role = REVIEWER  # the least role that may do anything here

    def has_permission(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return False
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return has_role(request.user, REVIEWER)
        return has_role(request.user, ADMIN)
