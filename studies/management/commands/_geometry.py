"""What the error_geometry and step_surprisal commands share (not a command)."""
import json
import time
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext

from annotation.management.exams import add_exam_argument, exam_id_of
from grading.judges.services import RunRefused
from studies.geometry import selectors, services


def add_common_arguments(parser):
    add_exam_argument(parser, help="Exam name or id (default: every exam).")
    parser.add_argument("--limit", type=int, help="At most this many error segments, taken in turn from each question "
                                                  "(from the answers or from a segments file).")
    parser.add_argument("--unit", choices=["sub_question", "step_label"], default="sub_question",
                        help="sub_question: each sub-question below its full points (the paper's unit); "
                             "step_label: each span an expert marked wrong.")
    parser.add_argument("--source", action="append", choices=["human", "synthetic", "probe-derived"],
                        help="The groups of segments (repeat it; default: human and synthetic). probe-derived: "
                             "the errors the sensitivity probes put into answers (their derived answers).")
    parser.add_argument("--segments-in", action="append",
                        help="Analyse the segments of this JSONL file instead (ours, or the paper's bundle as released: "
                             "human_error_segments.jsonl, llm_error_segments.jsonl, their step splits); repeat it for "
                             "several files.")
    parser.add_argument("--segments-group", choices=["human", "synthetic", "probe-derived"],
                        help="The group of the --segments-in lines that have no analysis_subset (default: from the "
                             "file name, human_... or llm_...).")
    parser.add_argument("--segments-out", help="Write the segments analysed to this JSONL file (the paper's shape).")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--bootstrap", type=int, default=1000, help="Bootstrap resamples (0: no intervals).")
    parser.add_argument("--inline", action="store_true", help="Work in this process (no Celery worker).")
    parser.add_argument("--format", choices=["json", "table"], default="table")


def endpoint_of(options):
    try:
        return services.find_endpoint(options["base_url"], options["api_key_env"])
    except ValidationError as exc:
        raise CommandError(gettext("Refused: %(join)s") % {"join": ' '.join(exc.messages)}) from exc


def start(options, **kwargs):
    segments = None
    files = options.get("segments_in") or []
    if isinstance(files, str):  # call_command(segments_in="x.jsonl")
        files = [files]
    if files:
        segments = []
        for name in files:
            try:
                segments += services.parse_segments_jsonl(Path(name).read_bytes(), group=options.get("segments_group"),
                                                          file_name=Path(name).name)
            except OSError as exc:
                raise CommandError(gettext("Cannot read %(segments_in)s: %(strerror)s.") % {"segments_in": name, "strerror": exc.strerror}) from exc
            except RunRefused as exc:
                raise CommandError(gettext("Refused: %(segments_in)s: %(exc)s") % {"segments_in": name, "exc": exc}) from exc
    try:
        return services.start_run(exam=exam_id_of(options), limit=options["limit"], unit=options["unit"], segments=segments,
                                  sources=options.get("source"),
                                  seed=options["seed"], bootstrap=options["bootstrap"], enqueue=not options["inline"],
                                  **kwargs)
    except (RunRefused, ValidationError) as exc:
        raise CommandError(gettext("Refused: %(join)s") % {"join": ' '.join(getattr(exc, 'messages', [str(exc)]))}) from exc


def finish(run, options, stdout, stderr, table):
    stderr.write(f"{run} : {run.n_items} segments.")
    if options["inline"]:
        run = services.run_inline(run)
    else:
        last = None
        while True:
            progress = selectors.run_progress(run)
            line = f"  {progress['done']}/{progress['total']} segments, {progress['error']} failed, analysis {progress['analysis']}"
            if line != last:
                stderr.write(line)
                last = line
            if progress["finished"]:
                break
            time.sleep(1.0)
        run.refresh_from_db()
    if options.get("segments_out"):
        Path(options["segments_out"]).write_text(selectors.segments_jsonl(selectors.run_segments(run)), encoding="utf-8")
    if run.analysis_state != run.Analysis.DONE:
        raise CommandError(gettext("The run ended without results (%(status)s; %(value)s).") % {"status": run.get_status_display(), "value": run.analysis_error or run.get_analysis_state_display()})
    if options["format"] == "json":
        stdout.write(json.dumps(run.results, indent=1, sort_keys=True, ensure_ascii=False))
    else:
        table(run.results, stdout)
    return run


def fmt(value, ci=None):
    text = "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
    if ci:
        text += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
    return text
