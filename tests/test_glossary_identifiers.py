"""One noun per concept, in the code as in docs/architecture.md's Glossary: the project's Python
(not its migrations, which are history) names no concept by an old or ambiguous word. Read with
`tokenize`, so strings (API and export field names, JSON keys, task names, the old
`/api/judge-configs/` address), comments and docstrings are not identifiers and not checked here.

- A judge setting is `setting` (plural `judge_settings`: `settings` is Django's module), never
  `config`, `configs`, `config_id`, `judge_config`...: allowed only where `config` means something
  else (the project package `config/` in import paths, the LLM library's and tesseract's own
  configuration, the labelling and OCR pages' script data, pytest's `config` argument) and as the
  class-level field names of the API's serializers, filtersets and the run form (`config`,
  `config_name`, `config_version`: the public names kept for compatibility).
- `JudgeConfig` (the model's old name) and `BatchRun` (AbstractRun's old name) are gone.
- A chunk's claimed items are claimed by `claim_chunk_items`, not `claim_batch`: "batch" is a scan
  batch, the provider's Batch API or an Arrow record batch; an import writes in write windows
  (`WindowWriter`, `write_windows_needed`, not `BatchWriter`, `batches_needed`).
- Engines are named by kind: `RUN_ENGINES` (the run engine's) and `OCR_ENGINES`, no bare `ENGINES`.
- Every Celery task function ends in `_task`, so a task never shares its name with the service it
  calls (`watch_ocr_run_task` and `services.watch_ocr_run`).
- `Label` is the class of annotation's labels only.

A failure names file:line and the name to use instead."""
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_DIRS = {".venv", "node_modules", "migrations", "var", "test-artifacts", "__pycache__", ".git"}

# A lowercase identifier with `config` or `configs` as one of its `_`-separated words.
CONFIG_WORD = re.compile(r"^_*(?:[a-z0-9]+_)*configs?(?:_[a-z0-9]+)*$")
# Lowercase identifiers with the word `config` that never name a judge setting.
OTHER_CONFIGS = {"app_config", "app_configs", "get_app_config", "get_app_configs", "llm_config",
                 "llm_config_module"}
# Where `config` means another thing than a judge setting: path prefixes -> why.
OTHER_MEANINGS = {
    "config/": "the project package (settings, Celery, URLs)",
    "llm/": "the LLM library's configuration (LlmConfig, llm.config)",
    "ocr/": "tesseract's options and the OCR pages' script data",
    "tests/llm/": "the LLM library's configuration",
    "tests/ocr/": "the OCR pages' script data",
    "tests/conftest.py": "pytest's `config` argument of its hooks",
    "tests/_template_db.py": "pytest's `config` argument of its hooks",
    "annotation/labelling/views.py": "the labelling page's script data",
    "annotation/views.py": "the labelling page's script data",
    "tests/labelling/": "the labelling page's script data (`config_of`)",
}
# The config package's modules, named as `config.<module>` (`config.celery`, `config.settings`).
CONFIG_MODULES = {path.stem for path in (ROOT / "config").glob("*.py")}
# Class-level field names of the public interface kept for compatibility (API fields and
# filters, the run form's `config`): in classes whose bases name one of these.
INTERFACE_BASES = re.compile(r"Serializer|FilterSet|Form\b")
INTERFACE_FIELDS = {"config", "config_name", "config_version"}

RENAMED = {
    "JudgeConfig": "JudgeSetting",
    "BatchRun": "AbstractRun",
    "claim_batch": "claim_chunk_items",
    "BatchWriter": "WindowWriter (an import's write window)",
    "batches_needed": "write_windows_needed",
    "ENGINES": "RUN_ENGINES (grading/runs/engine.py) or OCR_ENGINES (ocr/engines/)",
    "judge_config": "judge_setting",
    "judge_configs": "judge_settings",
}


def python_files(root=ROOT):
    for path in sorted(root.rglob("*.py")):
        if not SKIPPED_DIRS.intersection(path.relative_to(root).parts[:-1]):
            yield path


def _logical_lines(tokens):
    """Yield (first token of the line, [(index, token)...]) for each logical line."""
    line = []
    for index, token in enumerate(tokens):
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            if line:
                yield line
            line = []
        elif token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            line.append((index, token))


def file_violations(path, root=ROOT):
    relative = path.relative_to(root).as_posix()
    other_meaning = any(relative.startswith(prefix) for prefix in OTHER_MEANINGS)
    tokens = list(tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline))
    found = []
    classes = []  # [column of `class`, is an interface class, column of its body]
    previous_line = []
    for line in _logical_lines(tokens):
        first = line[0][1]
        while classes and first.start[1] <= classes[-1][0]:
            classes.pop()
        if classes and classes[-1][2] is None:
            classes[-1][2] = first.start[1]
        if first.string == "class":
            bases = "".join(token.string for _, token in line[1:])
            classes.append([first.start[1], bool(INTERFACE_BASES.search(bases)), None])
            name = line[1][1].string
            if name == "Label" and relative != "annotation/labelling/models.py":
                found.append((first.start[0], name, "a label is annotation's Label: name this class for what it is"))
        decorators = [token.string for _, token in previous_line if token.type == tokenize.NAME]
        if first.string in ("def", "async") and "shared_task" in decorators:
            name = next(token.string for _, token in line if token.type == tokenize.NAME and token.string not in ("def", "async"))
            if not name.endswith("_task"):
                found.append((first.start[0], name, f"a Celery task function ends in _task ({name}_task)"))
        if first.string == "@":
            previous_line = previous_line + line if previous_line and previous_line[0][1].string == "@" else line
        else:
            previous_line = []
        for position, (index, token) in enumerate(line):
            if token.type != tokenize.NAME:
                continue
            name = token.string
            for old, new in RENAMED.items():
                if name == old or (old[0].isupper() and old[1].islower() and name.startswith(old)):
                    found.append((token.start[0], name, f"{old} is {new}"))
            if not CONFIG_WORD.match(name) or name in OTHER_CONFIGS or name in RENAMED or name.startswith("test_"):
                continue
            before = line[position - 1][1].string if position else ""
            after = tokens[index + 1].string, tokens[index + 2].string if index + 2 < len(tokens) else ""
            if name == "config" and (before in ("from", "import") or (after[0] == "." and after[1] in CONFIG_MODULES)):
                continue  # the project package config/
            if other_meaning:
                continue
            if (classes and classes[-1][1] and position == 0 and after[0] in ("=", ":")
                    and first.start[1] == classes[-1][2] and name in INTERFACE_FIELDS):
                continue  # a public API or form field name, kept
            found.append((token.start[0], name, "a judge setting is `setting` (plural `judge_settings`)"))
    return [f"{relative}:{line}: {name}: {why}" for line, name, why in found]


def violations(root=ROOT):
    return [message for path in python_files(root) for message in file_violations(path, root)]


def test_the_code_uses_the_glossary_nouns():
    found = violations()
    assert not found, "\n".join(found)


def test_the_check_sees_what_it_forbids(tmp_path):
    (tmp_path / "grading").mkdir()
    (tmp_path / "grading" / "bad.py").write_text(
        "from celery import shared_task\n"
        "from config import settings\n"
        "from config.celery import app\n"
        "class Label:\n    pass\n"
        "class S(serializers.Serializer):\n    config = 1\n"
        "@shared_task(name='x')\ndef watch(run_id):\n    config = run_id\n    return claim_batch(config)\n"
        "def f(configs, judge_config=None):\n    return JudgeConfig, f'{configs}'\n"
        "@shared_task\ndef fine_task():\n    return 'config'  # config\n",
        encoding="utf-8")
    found = [message.split(": ")[1] for message in violations(tmp_path)]
    assert found == ["Label", "watch", "config", "claim_batch", "config", "configs", "judge_config", "JudgeConfig"], found
