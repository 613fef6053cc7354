"""The traces of docs/architecture.md ("Traces") stay true: each URL still resolves to the view
named, in the first file listed; every file listed exists and defines the name given after it;
no trace is longer than four files. Read from the document itself, so a moved file, a renamed
view or a longer trace fails here until the document says so."""
import ast
import re
from pathlib import Path

import pytest
from django.urls import resolve

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
MAX_FILES = 4
URL_LINE = re.compile(r"^`(?:GET|POST|PUT|PATCH|DELETE) (?P<url>[^`\s]+)`.*→ `(?P<view>[\w.]+)`")
FILE_LINE = re.compile(r"^\d+\. `(?P<path>[^`]+)` \(`(?P<name>\w+)`\)")


def _traces():
    section = DOC.read_text(encoding="utf-8").split("\n## Traces\n", 1)[1].split("\n## ", 1)[0]
    traces = []
    for block in section.split("\n### ")[1:]:
        title, *lines = block.splitlines()
        url = next((m for m in map(URL_LINE.match, lines) if m), None)
        files = [m.groupdict() for m in map(FILE_LINE.match, lines) if m]
        traces.append({"title": title.strip(), "url": url and url.groupdict(), "files": files})
    return traces


TRACES = [trace for trace in _traces() if trace["url"]]


def test_the_document_has_the_traces():
    titles = [trace["title"] for trace in TRACES]
    assert len(TRACES) >= 5, titles
    assert all(trace["files"] for trace in TRACES), titles


def _defined_names(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return names


@pytest.mark.parametrize("trace", TRACES, ids=[trace["title"] for trace in TRACES])
def test_each_file_exists_and_defines_its_name(trace):
    assert len(trace["files"]) <= MAX_FILES, f"{trace['title']}: {len(trace['files'])} files"
    for item in trace["files"]:
        path = ROOT / item["path"]
        assert path.is_file(), f"{trace['title']}: {item['path']} does not exist"
        assert item["name"] in _defined_names(path), f"{trace['title']}: {item['name']} is not in {item['path']}"


@pytest.mark.parametrize("trace", TRACES, ids=[trace["title"] for trace in TRACES])
def test_the_url_reaches_the_view_of_the_first_file(trace):
    func = resolve(trace["url"]["url"].split("?")[0]).func
    view = getattr(func, "view_class", None) or getattr(func, "cls", None) or func
    dotted = f"{func.__module__}.{view.__name__}"
    assert dotted == trace["url"]["view"], f"{trace['url']['url']} resolves to {dotted}"
    first = trace["files"][0]
    assert func.__module__.replace(".", "/") + ".py" == first["path"], f"{dotted} is not in {first['path']}"
    assert view.__name__ == first["name"]
