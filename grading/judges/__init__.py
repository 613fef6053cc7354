"""LLM and CAS judges: endpoints, settings, judge runs and results, prompt sets, the Answer check page.

- `kinds`: what each judge kind is shown and how its answer becomes a score or verdict.
- `prompts`: the judges' default templates and `render`, the filling of every ``{{ placeholder }}``
  template (generation's too).
- `parsing`: tolerant reading of scores and True/False verdicts from model text.

Runs, results and caching live in grading.judges.services / grading.judges.selectors / grading.judges.tasks,
on the run engine of grading.runs; the LLM transport is the `llm` library; synthetic answers are
grading.generation.
"""
