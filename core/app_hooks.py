"""How a lower app reaches what a later app adds to it, without importing that app.

The later app names one of its modules on its AppConfig (``export_section = "ocr.exchange"``,
``scan_panel = "ocr.panels"``, ...); the lower app asks for the modules named under that attribute
and calls the functions the attribute's documentation lists. So the arrow of imports runs down
(ocr imports annotation, never the reverse) while annotation's pages and commands still show and
do what ocr and grading add. The hooks, each documented where it is read:

- `export_section`: parts of the full export (`annotation.export.sections`);
- `report_section`: parts of the methods report (`grading.report.document.app_report_modules`);
- `scan_panel`: scans beside labels and scan batches to assign (`annotation.labelling.scans`);
- `demo_section`: parts of `manage.py load_demo` (`annotation.demo`);
- `release_import_option`: options of `manage.py import_realmath` (its command);
- `queue_attribution`: OCR-vs-judge tags on the disagreement queue's rows (`grading.review.selectors.queue`).

(Not a module: `run_engines`, the dotted paths of a later app's run engines, read by
`grading.runs.engine.engine_paths` for the run watchdog.)
"""
from importlib import import_module

from django.apps import apps


def app_modules(attribute):
    """The modules the installed apps name as `attribute` on their AppConfig, in INSTALLED_APPS order."""
    return [import_module(getattr(app_config, attribute)) for app_config in apps.get_app_configs()
            if getattr(app_config, attribute, None)]
