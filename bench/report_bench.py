"""Methods report time on the full RealMath-Eval release (224 human + 224 synthetic answers).

Imports the release (`fixtures/realmath_eval_full/`, `import_realmath`) and its VF and
write-through-first variant files as prompt sets into a scratch database, then bulk-creates
judge results for a few settings (a rubric setting on every answer, a replay setting per prompt
set, a CAS final-answer setting: scores invented, seeded), and times the methods report page (as a
logged-in reviewer through the Django test client, every setting, first and warm) and the
`methods_report` command, with their query counts. Target (issue 34): under 2 s.

    .venv/bin/python bench/report_bench.py [--smoke]
"""
import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import ROOT, print_table, setup_django, smoke_argument  # noqa: E402

RELEASE = ROOT / "fixtures" / "realmath_eval_full"


def populate(seed=3, smoke=False):
    import numpy as np
    from django.core.management import call_command

    from annotation.models import Response
    from grading.models import JudgeResult, JudgeSetting, PromptSet

    if smoke:  # the demo's sample: 2 questions, 32 answers, no prompt sets
        call_command("import_realmath", str(ROOT / "fixtures" / "demo" / "realmath_eval.json"), verbosity=0)
    else:
        call_command("import_realmath", str(RELEASE / "realmath_eval.json"), "--exam", "RealMath-Eval", verbosity=0)
        call_command("import_realmath", str(RELEASE / "realmath_eval_llm_answer.json"), "--exam", "RealMath-Eval",
                     verbosity=0)
        for name, file in (("vf", "VF_realmath_eval.json"), ("wtf", "write_through_first_realmath_eval.json")):
            call_command("import_realmath", str(RELEASE / file), "--prompt-set", name, verbosity=0)
    rng = np.random.default_rng(seed)
    answers = list(Response.objects.filter(gold_score__isnull=False).values_list("pk", "gold_score", "question__full_score"))
    settings = [JudgeSetting.objects.create(name=f"bench rubric {strategy}", kind="rubric", model="m", strategy=strategy)
                for strategy in ("reason-then-score", "verification-first", "follow-through-first")]
    for prompt_set in PromptSet.objects.order_by("name"):
        settings.append(JudgeSetting.objects.create(name=f"bench replay {prompt_set.name}", kind="replay", model="m",
                                                    prompt_set=prompt_set))
    for setting in settings:
        noise = rng.choice([-3, -2, -1, 0, 0, 0, 1, 2], len(answers))
        JudgeResult.objects.bulk_create(
            JudgeResult(setting=setting, response_id=pk, cache_key=f"{setting.pk}-{pk}", status="ok",
                        score=float(min(max(float(gold) + d, 0), float(full or 14))), rubric_version=1)
            for (pk, gold, full), d in zip(answers, noise))
    cas = JudgeSetting.objects.create(name="bench cas", kind="cas_final_answer")
    JudgeResult.objects.bulk_create(
        JudgeResult(setting=cas, response_id=pk, cache_key=f"cas-{pk}", status="ok", score=float(i % 3 != 0))
        for i, (pk, _, _) in enumerate(answers))
    return len(answers), len(settings) + 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    smoke_argument(parser)
    args = parser.parse_args()
    setup_django()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from accounts.services import create_user_with_role

    start = time.perf_counter()
    n_answers, n_settings = populate(smoke=args.smoke)
    print(f"imported and judged {n_answers} answers, {n_settings} settings in {time.perf_counter() - start:.1f} s")
    user = create_user_with_role("bench-reviewer", "bench-password-1", "reviewer")
    client = Client(HTTP_HOST="127.0.0.1")  # an allowed host (DJANGO_ALLOWED_HOSTS)
    client.force_login(user)
    rows = []
    for label in ("page, first", "page, warm", "page, warm again"):
        with CaptureQueriesContext(connection) as queries:
            t0, c0 = time.perf_counter(), time.process_time()
            response = client.get(reverse("grading:methods_report"))
            elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        assert response.status_code == 200, response.status_code
        rows.append([label, f"{elapsed:.2f} s", f"{cpu:.2f} s", len(queries)])
    with CaptureQueriesContext(connection) as queries, open(os.devnull, "w") as devnull:
        t0, c0 = time.perf_counter(), time.process_time()
        call_command("methods_report", "--output", str(Path(connection.settings_dict["NAME"]).parent / "report.md"),
                     stdout=devnull)
        rows.append(["command", f"{time.perf_counter() - t0:.2f} s", f"{time.process_time() - c0:.2f} s", len(queries)])
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall time counts the wait for a core; "
          "CPU time does not)")
    print_table("Methods report on the release", ["", "wall", "CPU", "queries"], rows)


if __name__ == "__main__":
    main()
