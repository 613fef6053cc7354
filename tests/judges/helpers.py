"""Runners for the judge tests (the builders are in tests/factories.py)."""
import re

from grading.judges import services
from tests.llm_server import Reply, message_text


def run_now(django_capture_on_commit_callbacks, setting, **kwargs):
    """Start a run and let the (eager) Celery tasks it queues on commit run to the end."""
    with django_capture_on_commit_callbacks(execute=True):
        run = services.start_judge_run(setting, **kwargs)
    run.refresh_from_db()
    return run


def resume_now(django_capture_on_commit_callbacks, run):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.resume_judge_run(run)
    run.refresh_from_db()
    return run


def score_by_answer(scores):
    """A server default that gives each 'Answer N' the score scores[N] (or 5)."""
    def reply(payload):
        match = re.search(r"Answer (\d+):", message_text(payload))
        value = scores.get(int(match.group(1)), 5) if match else 5
        return Reply(f"The student reaches checkpoint one.\n\n**Overall Score:** {value}\n\nBrief Explanation: fine.")

    return reply
