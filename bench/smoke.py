"""Run every benchmark at its ``--smoke`` size, so that none rots unnoticed (``make bench-smoke``).

Each bench in bench/ (every ``*_bench*.py``) runs in turn, in a process group of its own, on a
scratch SQLite database (DATABASE_URL is removed), with a time limit. A bench fails when it
exits non-zero, when it runs past its limit (its group gets SIGTERM, which its handler turns into
stopping what it started, then SIGKILL), or when any process it started is still running after
it ended: every process it starts inherits REALMATH_BENCH_TAG, and the runner looks for that tag
in /proc/<pid>/environ. A leftover is killed and named. scale_bench, whose machines share what
separate machines share, makes its own PostgreSQL database and uses Redis (it says it skipped
when they are not reachable).

    .venv/bin/python bench/smoke.py [--only judge_bench,export_bench] [--timeout 90]
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Seconds each bench may take at its smoke size (the default for any other).
LIMITS = {"ocr_bench": 150, "judge_bench": 120, "provider_bench": 120, "import_write_bench": 150,
          "scale_bench": 300}  # scale_bench: a PostgreSQL database migrated, three worker starts


def benches():
    return sorted(p for p in HERE.glob("*.py") if "_bench" in p.stem and not p.stem.startswith("_"))


def tagged(tag):
    """Pids of the processes whose environment carries REALMATH_BENCH_TAG=tag."""
    marker = f"REALMATH_BENCH_TAG={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:  # gone, or not ours to read
            continue
    return found


def describe(pid):
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:160]
    except OSError:
        return "?"


def migrated_template(folder):
    """One migrated SQLite database that every bench copies instead of migrating its own."""
    path = folder / "template.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{path}", "REALMATH_VAR_DIR": str(folder / "var")}
    env.pop("REALMATH_BENCH_DB_TEMPLATE", None)
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'bench'); "
                    "from _setup import setup_django; setup_django()"], cwd=HERE.parent, env=env, check=True,
                   timeout=600)
    return path


def run_one(path, timeout, template):
    tag = uuid.uuid4().hex
    scratch = Path(tempfile.mkdtemp(prefix=f"smoke-{path.stem}-"))
    # TMPDIR: whatever the bench leaves in its temporary folders goes with this one.
    env = {**os.environ, "REALMATH_BENCH_TAG": tag, "PYTHONUNBUFFERED": "1", "TMPDIR": str(scratch),
           "REALMATH_BENCH_DB_TEMPLATE": str(template)}
    env.pop("DATABASE_URL", None)
    log = tempfile.TemporaryFile(mode="w+")
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, str(path), "--smoke"], cwd=HERE.parent, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    problem = None
    try:
        process.wait(timeout)
        if process.returncode:
            problem = f"exit status {process.returncode}"
    except subprocess.TimeoutExpired:
        problem = f"still running after {timeout} s: stopped"
        os.killpg(process.pid, signal.SIGTERM)  # its handler stops what it started
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            pass
    except KeyboardInterrupt:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(20)
        raise
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    seconds = time.monotonic() - started
    time.sleep(0.5)  # a child told to stop by the kernel (its parent died) gets a moment
    left = tagged(tag)
    if left:
        names = "; ".join(f"{pid}: {describe(pid)}" for pid in left)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        problem = (problem + "; " if problem else "") + f"left {len(left)} process(es) running: {names}"
    shutil.rmtree(scratch, ignore_errors=True)
    log.seek(0)
    return seconds, problem, log.read()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated bench names (file names without .py)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per bench (some have their own, longer)")
    args = parser.parse_args()
    chosen = benches()
    if args.only:
        wanted = {name.strip().removesuffix(".py") for name in args.only.split(",")}
        chosen = [p for p in chosen if p.stem in wanted]
    print(f"bench smoke: {len(chosen)} benches, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
          flush=True)
    failed, total = [], time.monotonic()
    folder = Path(tempfile.mkdtemp(prefix="realmath-bench-smoke-"))
    try:
        template = migrated_template(folder)
        print(f"  {'(migrated database)':24} {time.monotonic() - total:6.1f} s", flush=True)
        for path in chosen:
            if run_path(path, args, template):
                failed.append(path.stem)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"bench smoke: {len(chosen) - len(failed)} of {len(chosen)} ok in {time.monotonic() - total:.0f} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    raise SystemExit(1 if failed else 0)


def run_path(path, args, template):
    """Run one bench and print its line (and its output's tail when it failed); True if it failed."""
    seconds, problem, output = run_one(path, LIMITS.get(path.stem, args.timeout), template)
    print(f"  {path.stem:24} {seconds:6.1f} s  {'FAILED: ' + problem if problem else 'ok'}", flush=True)
    if problem:
        print("    " + "\n    ".join(output.strip().splitlines()[-25:]), flush=True)
    return bool(problem)


if __name__ == "__main__":
    main()
