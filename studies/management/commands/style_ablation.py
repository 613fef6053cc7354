"""The style ablation from the command line (issue 27; studies/style.py, docs/studies.md).

    python manage.py style_ablation rewrite --base-url http://127.0.0.1:8001/v1 --api-key-env "" --model m \\
        [--exam ID] [--limit N]             # rewrite answers into textbook style with our default prompt
    python manage.py style_ablation import rewrites.json      # or take rewrites from a file
    python manage.py style_ablation run --setting rubric-gpt [--exam ID] [--limit N] [--inline] [--format json]

`run` judges originals and their (unflagged) rewrites with the same setting version and prints,
per group (human, synthetic) and overall, MSE, FR_2 and mean |judge - gold| before and after, paired,
with cluster-bootstrap intervals, and how many rewrites were flagged and excluded.
"""
import json
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.management.exams import add_exam_argument, exam_id_of
from grading.judges import services as judge_services
from studies import selectors, services, style

from .probe_judge import follow_probes


def _number(value):
    return "-" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = "Style ablation: rewrite answers into textbook style (LLM or file), judge both, compare before/after."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        rewrite = sub.add_parser("rewrite", help="Rewrite answers with an LLM (our default prompt).")
        rewrite.add_argument("--base-url", dest="base_url", required=True)
        rewrite.add_argument("--api-key-env", dest="api_key_env", default="OPENAI_API_KEY")
        rewrite.add_argument("--model", required=True)
        add_exam_argument(rewrite)
        rewrite.add_argument("--limit", type=int)
        imported = sub.add_parser("import", help="Rewrites from the paper's style-transferred file as released, or a "
                                                 "JSON list of {response_id, rewritten}.")
        imported.add_argument("file")
        flagged = sub.add_parser("flagged", help="Why each flagged rewrite was flagged (final answers, lines not found).")
        flagged.add_argument("--format", choices=["json", "table"], default="table")
        run = sub.add_parser("run", help="Judge originals and rewrites with one setting and report.")
        run.add_argument("--setting", required=True)
        add_exam_argument(run)
        run.add_argument("--limit", type=int)
        run.add_argument("--bootstrap", type=int, default=1000)
        run.add_argument("--seed", type=int, default=0)
        run.add_argument("--include-flagged", dest="include_flagged", action="store_true",
                         help="Judge the flagged rewrites too, reported apart in a second analysis.")
        run.add_argument("--inline", action="store_true", help="Work in this process (no Celery worker).")
        run.add_argument("--format", choices=["json", "table"], default="table")

    def handle(self, *args, **options):
        action = options["action"]
        try:
            if action == "rewrite":
                endpoint = judge_services.find_or_create_endpoint(options["base_url"], options["api_key_env"])
                answers = style.selected_answers(exam=exam_id_of(options), limit=options["limit"])
                counts = style.rewrite_answers(endpoint, options["model"], answers)
                self.stdout.write(f"Rewrites: {counts['made']} made, {counts['kept']} kept, {counts['failed']} failed, "
                                  f"{counts['flagged']} flagged (final answer changed or a line dropped).")
            elif action == "import":
                path = Path(options["file"])
                if not path.is_file():
                    raise CommandError(f"{path}: no such file.")
                if path.stat().st_size > settings.IMPORT_MAX_BYTES:
                    raise CommandError(f"{path}: file is larger than {settings.IMPORT_MAX_BYTES} bytes.")
                counts = style.import_rewrites(path.read_bytes(), path.name)
                self.stdout.write(f"Rewrites from {path.name}: {counts['made']} made, {counts['kept']} kept, "
                                  f"{counts['flagged']} flagged, {len(counts['unmatched'])} unmatched records "
                                  f"{counts['unmatched'][:20]}.")
                if counts["same_as_original"]:
                    self.stdout.write(f"  {len(counts['same_as_original'])} records hold the answer's own text, not a "
                                      f"rewrite: left out {counts['same_as_original'][:20]}.")
            elif action == "flagged":
                self._flagged(options)
            else:
                self._run(options)
        except (ValidationError, ValueError) as exc:
            raise CommandError(" ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)) from exc

    def _run(self, options):
        setting = selectors.find_setting(options["setting"])
        if setting is None:
            raise CommandError(f"No setting {options['setting']!r}.")
        run = services.start_probe_run(setting, probe_names=[style.PROBE], exam=exam_id_of(options),
                                       limit=options["limit"], enqueue=not options["inline"],
                                       include_flagged=options["include_flagged"])
        self.stderr.write(f"Style-ablation run {run.pk} of {setting}: {run.n_items} rewrites to judge.")
        run = services.run_inline(run) if options["inline"] else follow_probes(run, self.stderr)
        report = style.ablation_report(run, n_resamples=options["bootstrap"], seed=options["seed"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2, sort_keys=True))
            return
        self.stdout.write(f"Run {run.pk}: {report['n_judged']} rewrites judged, {report['n_rewrites_judged']} in the "
                          f"analysis ({report['n_flagged_judged']} flagged in the second one, "
                          f"{report['n_judged_without_gold']} without a gold score); flagged and excluded: "
                          f"{report['n_flagged_excluded']} {report['flagged']}; without a rewrite: "
                          f"{report['n_without_rewrite']}. Difference: {report['difference']}.")
        self._groups(report["groups"])
        if report["with_flagged"]:
            self.stdout.write(f"Second analysis, flagged rewrites included ({report['with_flagged']['n_flagged']} "
                              f"flagged: they may differ in content, not only in style):")
            self._groups(report["with_flagged"]["groups"])

    def _flagged(self, options):
        cases = style.flag_details(style.current_rewrites())
        if options["format"] == "json":
            self.stdout.write(json.dumps(cases, indent=2, ensure_ascii=False))
            return
        self.stdout.write(f"{len(cases)} flagged rewrites.")
        for case in cases:
            record = f" (record {case['record']})" if case["record"] is not None else ""
            self.stdout.write(f"answer {case['response']}{record}, {case['question_label']}: {', '.join(case['reasons'])}; "
                              f"final {case['final_before']!r} -> {case['final_after']!r} ({case['final_check']}); "
                              f"lines {case['lines_before']} -> {case['lines_after']}")
            for line in case["lines_not_found"]:
                self.stdout.write(f"    not found in the rewrite: {line}")

    def _groups(self, groups):
        for group, block in groups.items():
            self.stdout.write(f"  {group} (n = {block['n']}, {block['n_questions']} questions)")
            for key, title in (("mse", "MSE"), ("fr_2", "FR_2"), ("mae", "mean |judge - gold|")):
                m = block["measures"][key]
                self.stdout.write(f"    {title:<22} before {_number(m['a'])}  after {_number(m['b'])}  "
                                  f"after - before {_number(m['difference'])}  [{_number(m['ci'][0])}, {_number(m['ci'][1])}]")
