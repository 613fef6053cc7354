"""Shared start-up of the benchmark scripts: a scratch database, migrated, with Django set up.

Benchmarks are scripts, not tests. Each uses a fresh SQLite file in a temporary folder unless
DATABASE_URL is set (then that database is used as it is: point it at a scratch database). With
REALMATH_BENCH_DB_TEMPLATE (bench/smoke.py sets it) the fresh file is a copy of that migrated
database instead of being migrated again. Every bench passes ``--smoke`` for a size that runs in
seconds, and starts its processes through `_procs` (stopped with it, whatever way it ends).
"""
import json
import os
import random
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # also when imported as bench._setup
import _procs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "fixtures" / "demo" / "realmath_eval.json"


def generate_release(n, path, seed=7):
    """A RealMath-Eval release file of `n` answers: the sample's records in turn, over 14
    problems, each answer marked and with a new student id (seeded)."""
    template = json.loads(SAMPLE.read_text())
    rng = random.Random(seed)
    with path.open("w") as handle:
        handle.write("[")
        for i in range(n):
            base = dict(template[i % len(template)])
            base["problem_statement"] = f"[Problem {i % 14}] " + base["problem_statement"]
            base["student_response"] = base["student_response"] + f"\n(answer sheet {i})"
            base["student_id"] = f"{rng.getrandbits(128):032x}"
            handle.write(("," if i else "") + json.dumps(base, ensure_ascii=False))
        handle.write("]")


def copy_template_database(path):
    """Put a copy of the migrated REALMATH_BENCH_DB_TEMPLATE at `path`; False when there is none."""
    template = os.environ.get("REALMATH_BENCH_DB_TEMPLATE")
    if not template or not Path(template).is_file():
        return False
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, path)
    return True


def setup_django(migrate=True):
    _procs.install()
    sys.path.insert(0, str(ROOT))
    copied = False
    if "DATABASE_URL" not in os.environ:
        scratch = Path(tempfile.mkdtemp(prefix="realmath-bench-"))
        os.environ["REALMATH_VAR_DIR"] = str(scratch)
        copied = migrate and copy_template_database(scratch / "db.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    if migrate and not copied:
        call_command("migrate", verbosity=0, interactive=False)


def smoke_argument(parser):
    """``--smoke``: the size `make bench-smoke` runs, in seconds."""
    parser.add_argument("--smoke", action="store_true", help="a size that runs in seconds (make bench-smoke)")


@contextmanager
def timed(results, name):
    start = time.perf_counter()
    yield
    results[name] = time.perf_counter() - start


def print_table(title, header, rows):
    print(f"\n{title}")
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(cell).rjust(w) if i else str(cell).ljust(w) for i, (cell, w) in enumerate(zip(row, widths))))
