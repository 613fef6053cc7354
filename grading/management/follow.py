"""Following a queued run from the command line (shared by the run commands of grading and studies;
not a command)."""
import time


def follow(run, progress_of, line_of, out, every=1.0):
    """Wait for a queued run to end, writing its progress line (`line_of(progress_of(run))`)
    to `out` whenever it changes; return the run."""
    last = None
    while True:
        run.refresh_from_db()
        line = line_of(progress_of(run))
        if line != last:
            out.write(f"  {line}")
            last = line
        if run.status != run.Status.RUNNING:
            return run
        time.sleep(every)
