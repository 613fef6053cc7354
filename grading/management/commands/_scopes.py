"""The scope a review command is given (shared by `metrics` and `disagreements`; not a command)."""
from django.core.management.base import CommandError

from grading.review import selectors


def named_scopes(options):
    """The one scope ``--run`` or ``--setting`` (with ``--setting-version``) names, as a list;
    None when neither is given (the command then takes every setting with results)."""
    try:
        if options["run"] is not None:
            return [selectors.resolve_scope({"run": str(options["run"])})]
        if options["setting"]:
            return [selectors.Scope(setting=selectors.find_setting(options["setting"], options["setting_version"]))]
    except selectors.ScopeError as exc:
        raise CommandError(str(exc)) from exc
    return None
