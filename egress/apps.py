from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class EgressConfig(AppConfig):
    """The log of what leaves the machine: every call to an LLM or vision provider (docs/security.md)."""

    name = "egress"
    verbose_name = gettext_lazy("Provider calls")

    def ready(self):
        # The transport reports each request to the observer; the buffered records are written
        # at the end of each request, task and process (services.install).
        from . import services

        services.install()
