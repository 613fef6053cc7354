"""Read side of the judge-vs-human review, one module per concept:

- `scopes`: what the figures are about (a setting version or a run), its current results, labels;
- `reports`: the metrics report of a scope and its table;
- `ledger`: the per-sub-question ledger;
- `rubric`: a question's figures before and after its rubric was edited;
- `queue`: the disagreement queue (`QueueFilter`, the one set of its filters), its rows, one case;
- `categories`: counts of confirmed categories, meta-evaluation runs' progress;
- `validation`: step-judge validation figures;
- `comparison`: two or more setting versions paired on the answers both scored (the paired
  statistics themselves are core.paired, pure numpy).

Every figure is computed from plain value lists fetched in one query (plus one or two for
labels), so the number of queries does not grow with the number of results. The names below are
the package's API: callers write ``selectors.metrics_report(...)``.
"""
from .categories import category_summary, meta_eval_run_progress, recent_meta_eval_runs  # noqa: F401
from .comparison import (  # noqa: F401
    METHOD_TEXT,
    SELECTION_RULE,
    CompareError,
    compare_pair,
    compare_settings,
    resolve_settings,
)
from .ledger import sub_question_ledger  # noqa: F401
from .queue import (  # noqa: F401
    QUEUE_FILTERS,
    QUEUE_STATES,
    CategoryField,
    CategoryFilter,
    IdField,
    IdFilter,
    QueueFilter,
    disagreement_queue,
    meta_history,
    neighbours,
    parse_threshold,
    proposal_counts,
    queue_filter_errors,
    queue_ordering,
    queue_page_rows,
    queue_stats,
    review_case,
)
from .reports import CI_COLUMNS, METRIC_COLUMNS, metrics_report, metrics_table  # noqa: F401
from .rubric import rubric_comparison, rubric_comparisons  # noqa: F401
from .scopes import (  # noqa: F401
    BOOTSTRAP_RESAMPLES,
    DEFAULT_THRESHOLD,
    EPS,
    LEFT_OUT_REASONS,
    Scope,
    ScopeError,
    current_results,
    default_setting,
    find_setting,
    labels_of,
    question_label,
    recent_runs,
    resolve_scope,
    settings_with_results,
)
from .validation import (  # noqa: F401
    FINAL_ANSWER_KINDS,
    JUDGE_SLOTS,
    OVERALL_SLOTS,
    POSITIVE_CLASSES,
    SLOT_LABELS,
    STEP_SLOTS,
    confusion_figures,
    validation_case,
    validation_judges,
    validation_report,
    validation_response_ids,
    validation_rows,
)
