"""Check predicted answers against gold answers from a JSON Lines file.

Each input line is ``{"pred": ..., "gold": ...}`` with an optional ``"mode"`` ("default" or
"strict"). Each output line is ``{"line", "equivalent", "method", "explanation", "pred_parsed",
"gold_parsed", "mode", "approximate", "decisive"}`` in input order; ``equivalent`` is true, false or
null (undecided), ``approximate`` true when equal only up to rounding at the written place. A line that
is not valid input gives an output line with ``"method": "input-error"`` and an ``"error"``
message instead of stopping the run. Blank lines are skipped.
"""
import json
import sys

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from equivalence import MODES, check_many

BATCH = 500


class Command(BaseCommand):
    help = "Check final answers for equivalence: INPUT.jsonl lines {pred, gold[, mode]} -> one JSON line each."

    def add_arguments(self, parser):
        parser.add_argument("input", help="JSON Lines file ('-' reads standard input)")
        parser.add_argument("--out", help="write results here instead of standard output")
        parser.add_argument("--mode", choices=MODES, default="default", help="mode for lines that do not name one")
        parser.add_argument("--timeout", type=float, default=2.0, help="seconds per check (hard limit)")
        parser.add_argument("--workers", type=int, default=None, help="worker processes to use side by side")

    def handle(self, *args, **options):
        if options["timeout"] <= 0:
            raise CommandError(gettext("--timeout must be positive"))
        source = self._open_input(options["input"])
        sink = self._open_output(options["out"])
        counts = {"true": 0, "false": 0, "undecided": 0, "errors": 0}
        try:
            batch = []
            for number, raw in enumerate(source, start=1):
                if not raw.strip():
                    continue
                batch.append((number, raw))
                if len(batch) >= BATCH:
                    self._run_batch(batch, options, sink, counts)
                    batch = []
            if batch:
                self._run_batch(batch, options, sink, counts)
        finally:
            if source is not sys.stdin:
                source.close()
            if sink is not self.stdout:
                sink.close()
        summary = (f"{counts['true']} equivalent, {counts['false']} not equivalent, "
                   f"{counts['undecided']} undecided, {counts['errors']} bad lines")
        self.stderr.write(summary)

    def _open_input(self, path):
        if path == "-":
            return sys.stdin
        try:
            return open(path, encoding="utf-8", errors="replace")
        except OSError as exc:
            raise CommandError(gettext("cannot read %(path)s: %(strerror)s") % {"path": path, "strerror": exc.strerror}) from exc

    def _open_output(self, path):
        if not path:
            return self.stdout
        try:
            return open(path, "w", encoding="utf-8")
        except OSError as exc:
            raise CommandError(gettext("cannot write %(path)s: %(strerror)s") % {"path": path, "strerror": exc.strerror}) from exc

    def _run_batch(self, batch, options, sink, counts):
        rows = []
        by_mode = {}
        for number, raw in batch:
            item, error = parse_line(raw, options["mode"])
            rows.append({"line": number, "item": item, "error": error})
            if item is not None:
                by_mode.setdefault(item["mode"], []).append(len(rows) - 1)
        for mode, indexes in by_mode.items():
            pairs = [(rows[i]["item"]["pred"], rows[i]["item"]["gold"]) for i in indexes]
            verdicts = check_many(pairs, mode=mode, timeout=options["timeout"], workers=options["workers"])
            for index, verdict in zip(indexes, verdicts):
                rows[index]["verdict"] = verdict
        for row in rows:
            sink.write(json.dumps(output_line(row), ensure_ascii=False) + "\n")
            _count(row, counts)

def parse_line(raw, default_mode):
    """(item, None) for a good line, (None, message) for a bad one."""
    try:
        # Numbers keep their written form: 0.10 stays "0.10", not a float.
        data = json.loads(raw, parse_float=str, parse_int=str)
    except ValueError as exc:
        return None, f"not valid JSON ({exc.msg} at column {exc.colno})"
    except RecursionError:
        # Python's JSON decoder recurses once per nesting level; [[[[...]]]] 5000 deep exhausts the stack.
        return None, "not valid input: the JSON is nested too deeply (each line is one flat {\"pred\", \"gold\"} object)"
    if not isinstance(data, dict):
        return None, "each line must be a JSON object with \"pred\" and \"gold\""
    missing = [key for key in ("pred", "gold") if key not in data]
    if missing:
        return None, f"missing {' and '.join(repr(k) for k in missing)}"
    for key in ("pred", "gold"):
        if not isinstance(data[key], str):
            return None, f"{key!r} must be a string or a number"
    mode = data.get("mode", default_mode)
    if mode not in MODES:
        return None, f"\"mode\" must be one of {', '.join(MODES)}"
    return {"pred": data["pred"], "gold": data["gold"], "mode": mode}, None


def output_line(row):
    if row["error"]:
        return {"line": row["line"], "equivalent": None, "method": "input-error", "explanation": row["error"],
                "error": row["error"]}
    verdict = row["verdict"]
    return {
        "line": row["line"], "equivalent": verdict.equivalent, "method": verdict.method,
        "explanation": verdict.explanation, "pred_parsed": verdict.pred_parsed, "gold_parsed": verdict.gold_parsed,
        "mode": verdict.mode, "approximate": verdict.approximate, "decisive": verdict.decisive,
    }


def _count(row, counts):
    if row["error"]:
        counts["errors"] += 1
    elif row["verdict"].equivalent is None:
        counts["undecided"] += 1
    else:
        counts["true" if row["verdict"].equivalent else "false"] += 1
