"""Builders for the judge tests."""
import re
import uuid

from grading import services
from grading.models import JudgeConfig, LlmEndpoint
from tests.llm_server import Reply, message_text

API_KEY_ENV = "REALMATH_LLM_KEY_TEST"


def make_endpoint(server, **fields):
    values = {
        "name": f"test-{uuid.uuid4().hex[:8]}",
        "base_url": server.url,
        "api_key_env": API_KEY_ENV,
        "max_concurrency": 8,
        "timeout_seconds": 2.0,
        "max_attempts": 4,
    }
    values.update(fields)
    return LlmEndpoint.objects.create(**values)


def make_config(endpoint=None, *, name=None, kind=JudgeConfig.Kind.RUBRIC, **fields):
    values = {"model": "judge-model", "temperature": 0.0, "max_tokens": 512, "parse_retries": 0}
    values.update(fields)
    return services.create_judge_config(name=name or f"judge-{uuid.uuid4().hex[:6]}", kind=kind, endpoint=endpoint, **values)


def run_now(django_capture_on_commit_callbacks, config, **kwargs):
    """Start a run and let the (eager) Celery tasks it queues on commit run to the end."""
    with django_capture_on_commit_callbacks(execute=True):
        run = services.start_judge_run(config, **kwargs)
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
