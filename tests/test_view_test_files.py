"""Every page view has its own test file, `tests/<area>/test_<view>_view.py` (docs/architecture.md).

The page views are what the URL configuration routes to in the project's apps, less the API
(`*.api` modules: their tests are `test_api_<part>.py`). A view's name is its function's name, a
class view's name in snake case without "View" (`LoginView` -> `login`), and a progress, cancel
or resume view made by `grading.runs.views.run_action_views` its URL name without the area's
prefix (`judge_run_progress` -> `run_progress`; the studies' names have none: `probe_run_cancel`).
"""
import re
from pathlib import Path

from django.urls import URLResolver, get_resolver

TESTS = Path(__file__).resolve().parent
PROJECT_APPS = {"accounts", "annotation", "ocr", "grading", "studies", "validity", "egress", "core"}
RUN_ACTION_PREFIX = re.compile(r"^(judge|review)_")

# Views that need no file of their own, and why.
EXCEPTIONS = {
    # grading.review.views.moved_permanently: the old "prelabel" addresses answer 308 to the new
    # ones; tests/review/test_meta_eval_run_addresses.py follows each of them.
    "moved_permanently",
}

def _patterns(resolver):
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            yield from _patterns(pattern)
        else:
            yield pattern


def view_name(pattern):
    """The name a page view's test file carries, or None when the route is no page view of ours."""
    callback = pattern.callback
    view_class = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
    module = (view_class or callback).__module__
    if module.split(".")[0] not in PROJECT_APPS or module.endswith(".api") or ".api." in module:
        return None
    if view_class is not None:
        return re.sub(r"(?<!^)(?=[A-Z])", "_", view_class.__name__.removesuffix("View")).lower()
    if module == "grading.runs.views":
        return RUN_ACTION_PREFIX.sub("", pattern.name)
    if "<locals>" in callback.__qualname__:  # a view a factory made: named for the factory
        return callback.__qualname__.split(".")[0]
    return callback.__name__


def page_views():
    return {name for name in map(view_name, _patterns(get_resolver())) if name}


def view_test_files():
    return {path.name.removeprefix("test_").removesuffix("_view.py") for path in TESTS.rglob("test_*_view.py")}


def test_the_walk_finds_the_page_views_of_every_app():
    views = page_views()
    assert {"run_start", "label_response", "page_correct", "validity_page", "call_log", "login",
            "run_progress", "probe_run_cancel", "metrics_page"} <= views
    assert not {"healthz", "judge_run_viewset", "judge_setting_viewset"} & views
    assert len(views) > 90


def test_every_page_view_has_its_own_test_file():
    missing = page_views() - view_test_files() - EXCEPTIONS
    assert not missing, f"page views without tests/<area>/test_<view>_view.py: {sorted(missing)}"


def test_every_exception_is_still_a_page_view_without_a_file():
    stale = EXCEPTIONS - (page_views() - view_test_files())
    assert not stale, f"take these out of EXCEPTIONS: {sorted(stale)}"
