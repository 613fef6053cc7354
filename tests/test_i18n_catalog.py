"""The Chinese catalogues are complete: `makemessages` over the source finds nothing untranslated.

The source (apps, templates, static/js) is copied to a temporary directory with the .po files and
`make messages`'s own commands run there, so the repository is left as it is; then gettext's
msgattrib lists untranslated and fuzzy entries. A new string in the code fails this test until it
is translated (`make messages`, fill in locale/zh_Hans/LC_MESSAGES/*.po).
"""
import os
import shutil
import subprocess
import sys

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("msgattrib") is None, reason="gettext tools are not installed")

# Everything but what makemessages is told to ignore (and the virtualenv, git, data, vendored files).
NOT_SOURCE = {".venv", ".git", "var", "tests", "bench", "test-artifacts", "fixtures", "docs", "node_modules", "static"}
IGNORE = ("var/*", "tests/*", "bench/*", "test-artifacts/*", "fixtures/*", "docs/*", "node_modules/*")


def _entries(po, *flags):
    listed = subprocess.run(["msgattrib", *flags, "--no-obsolete", "--no-wrap", str(po)],
                            capture_output=True, text=True, check=True).stdout
    blocks = [b for b in listed.split("\n\n") if "msgid " in b and 'msgid ""\nmsgstr ""\n"' not in b]
    return [b.strip() for b in blocks]


def test_makemessages_finds_nothing_untranslated_or_fuzzy(tmp_path):
    copy = tmp_path / "src"
    for source in ROOT.iterdir():
        name = source.name
        if name in NOT_SOURCE or name.startswith("."):
            continue
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.mo"))
        else:
            shutil.copy2(source, copy / name)
    shutil.copytree(ROOT / "static" / "js", copy / "static" / "js")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "PYTHONPATH": str(copy),
           "REALMATH_MEDIA_ROOT": str(tmp_path / "media")}
    ignore = [arg for pattern in IGNORE for arg in ("-i", pattern)]
    for domain, extra in (("django", ["-i", "static/*"]), ("djangojs", ["-i", "static/vendor/*"])):
        subprocess.run([sys.executable, "manage.py", "makemessages", "-l", "zh_Hans", "-d", domain,
                        "--add-location=file", "--no-obsolete", *ignore, *extra],
                       cwd=copy, env=env, check=True, capture_output=True)
    problems = []
    for po in sorted((copy / "locale").glob("*/LC_MESSAGES/*.po")):
        for label, flags in (("untranslated", ["--untranslated"]), ("fuzzy", ["--only-fuzzy"])):
            problems += [f"{po.relative_to(copy)} {label}:\n{entry}" for entry in _entries(po, *flags)]
    assert not problems, "run `make messages` and translate:\n\n" + "\n\n".join(problems[:30])
