"""Writes of the judges, one module per concern:

- `settings`: endpoints and judge settings (versioned), what a run needs of them, whether an
  endpoint can be called from here;
- `cache_keys`: what a judge is shown about a response and the key a result is claimed by;
- `selection`: the answers a run of a setting works on, and which results are final;
- `cost`: what a run would cost before it starts (calls, tokens, cost live and batch);
- `lifecycle`: start, re-judge, enqueue, cancel and resume a judge run (`JUDGE_RUNS` on
  grading/runs/engine.py);
- `chunks`: the chunk task's body: claims, calls on `call_pool`, recording, the tails a worker
  process finishes before it stops, the bulk SQL writes;
- `batches`: a batch-mode run's poll task (the Batch API): lines, parts, results through the
  chunks' claims and recording.

The names below are the package's API: callers write ``services.start_judge_run(...)``.
"""
from .batches import advance_batch_run, custom_id_for, poll_batch_run, run_batch_inline
from .cache_keys import cache_key, input_cache_key, judge_input
from .chunks import (
    CAS_THREADS,
    RESULT_FIELDS,
    TAIL_SHUTDOWN_SECONDS,
    TAILS,
    finish_tails,
    make_caller,
    process_judge_chunk,
    run_inline,
)
from .cost import describe as describe_estimate
from .cost import estimate_judge_run
from .lifecycle import (
    JUDGE_RUNS,
    OPEN_ITEM_STATES,
    cancel_judge_run,
    clean_params,
    enqueue_judge_run,
    may_take_over,
    rejudge_question,
    resume_judge_run,
    schedule_batch_poll,
    start_judge_run,
)
from .selection import FINAL_RESULT, selected_ids
from .settings import (
    ENDPOINT_FIELDS,
    SETTING_FIELDS,
    RunRefused,
    batch_client,
    check_batch_endpoint,
    check_endpoint_usable,
    create_judge_setting,
    endpoint_spec,
    endpoint_warnings,
    find_or_create_endpoint,
    judge_spec,
    save_endpoint,
    setting_is_used,
    test_endpoint,
    update_judge_setting,
)

__all__ = [
    "CAS_THREADS", "SETTING_FIELDS", "ENDPOINT_FIELDS", "FINAL_RESULT", "JUDGE_RUNS", "OPEN_ITEM_STATES",
    "RESULT_FIELDS", "TAILS", "TAIL_SHUTDOWN_SECONDS", "RunRefused", "cache_key", "cancel_judge_run",
    "check_endpoint_usable", "clean_params", "describe_estimate", "estimate_judge_run", "selected_ids", "create_judge_setting", "endpoint_spec", "endpoint_warnings",
    "enqueue_judge_run", "find_or_create_endpoint", "finish_tails", "input_cache_key", "judge_input", "judge_spec",
    "make_caller", "may_take_over", "process_judge_chunk", "rejudge_question", "resume_judge_run", "run_inline",
    "save_endpoint", "setting_is_used", "start_judge_run", "test_endpoint", "update_judge_setting",
    "advance_batch_run", "batch_client", "check_batch_endpoint", "custom_id_for", "poll_batch_run", "run_batch_inline",
    "schedule_batch_poll",
]
