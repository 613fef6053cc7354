from django.core.management.base import BaseCommand
from django.utils.translation import gettext

from accounts.services import create_user_with_role

DEMO_USERS = [
    ("admin", "admin-demo-pass", "admin"),
    ("reviewer", "reviewer-demo-pass", "reviewer"),
    ("annotator1", "annotator-demo-pass", "annotator"),
    ("annotator2", "annotator-demo-pass", "annotator"),
]


class Command(BaseCommand):
    help = "Create the demo users (one per role) and print their logins."

    def handle(self, *args, **options):
        for username, password, role in DEMO_USERS:
            create_user_with_role(username, password, role)
            self.stdout.write(gettext("  %(role)s login: %(username)s password: %(password)s") % {"role": format(role, "<10"), "username": format(username, "<12"), "password": password})
        user = create_user_with_role("admin", "admin-demo-pass", "admin")
        user.is_superuser = True
        user.save(update_fields=["is_superuser"])
