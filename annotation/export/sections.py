"""Other apps' parts of the full export.

An app joins the full JSONL export by naming a module on its AppConfig, ``export_section =
"<app>.exchange"`` (apps are asked in INSTALLED_APPS order); the module may define:

- `GLOBAL_TYPES`: line types it writes before the responses (e.g. {"judge_config"});
- `export_global(response_ids)`: yields those lines (dicts with a "type");
- `referenced_usernames(response_ids)`: users its sections name (exported as user lines);
- `export_responses(response_ids)`: {response_id: {section: data}} merged into response lines;
- `global_shapes()`: {line type: shape} of its global lines, and `response_shapes()`:
  {section key: shape} of its sections of a response line (`annotation.importers.checks`):
  every field is checked against its column before anything is written;
- `note_line(line, kind, number, context)`: during that check, what a line defines and names
  (raise `checks.Refused(field, problem)` to refuse it), and `check_references(context, user)`:
  after the last line, (line, field, problem) for each name found neither in the file nor here;
- `import_global(line, context)`: creates what one of its global lines describes;
- `import_response(response, line, context)`: creates its sections of one response line;
- `flat_tables(responses)`: its tables of the CSV and Parquet exports, as
  `annotation.export.tables.FlatTable`s (one SQL query each, rows in response order).

`context` is a dict shared through one import (users by name, objects by natural key, ...).
"""
from core.app_hooks import app_modules


def section_modules():
    """The section modules of the installed apps that name one, in INSTALLED_APPS order."""
    return app_modules("export_section")
