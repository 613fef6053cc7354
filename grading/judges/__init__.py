"""LLM and CAS judges: prompts, output parsing, judge kinds and the LLM client wrapper.

- `kinds`: what each judge kind is shown and how its answer becomes a score or verdict.
- `prompts`: default templates (``{{ placeholder }}`` syntax) for judges and generation.
- `parsing`: tolerant reading of scores and True/False verdicts from model text.
- `client`: the `openai` client with our retries, backoff and the shared rate limiter.

Runs, results and caching live in grading.judges.services / grading.judges.selectors / grading.judges.tasks.
"""
