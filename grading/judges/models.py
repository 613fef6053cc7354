"""Judge settings, runs and results.

Judge output is kept apart from expert labels (annotation.Label): a JudgeResult names
the exact setting version that produced it, and a setting that has produced anything is
never changed again (editing makes a new version; see grading.judges.services).
"""
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from llm import access

from ..runs.models import AbstractRun

env_name_validator = RegexValidator(
    r"^[A-Za-z_][A-Za-z0-9_]*$", "Give the name of an environment variable (letters, digits, underscores), not a key."
)


class LlmEndpoint(models.Model):
    """An OpenAI-compatible server and the limits every worker respects when calling it.

    The API key is never stored: `api_key_env` names the environment variable (or mounted
    secret file) to read it from, in the process that makes the call.
    """

    name = models.CharField(max_length=100, unique=True)
    base_url = models.CharField(
        max_length=500, blank=True, help_text=gettext_lazy("e.g. http://127.0.0.1:8001/v1; blank: the OPENAI_BASE_URL setting.")
    )
    api_key_env = models.CharField(
        "API key variable", max_length=100, blank=True, default="OPENAI_API_KEY", validators=[env_name_validator],
        help_text=gettext_lazy("Name of the environment variable holding the key; blank if the server needs none."),
    )
    max_concurrency = models.PositiveIntegerField(
        default=8, validators=[MinValueValidator(1), MaxValueValidator(1024)],
        help_text=gettext_lazy("Calls in flight at once, over all workers."),
    )
    requests_per_minute = models.PositiveIntegerField(
        default=0, help_text=gettext_lazy("0: as the provider's rate-limit headers say (no limit if it sends none). "
                                          "A number here is a ceiling."))
    tokens_per_minute = models.PositiveIntegerField(
        default=0, help_text=gettext_lazy("0: as the provider's rate-limit headers say (no limit if it sends none). "
                                          "A number here is a ceiling."))
    timeout_seconds = models.FloatField(default=120.0, validators=[MinValueValidator(0.05)])
    max_attempts = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1), MaxValueValidator(20)],
        help_text=gettext_lazy("Attempts per call on 429, 5xx, timeouts and dropped connections."),
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def clean(self):
        """Only allowed key variables and hosts (llm.access); calls check again."""
        errors = {}
        if self.base_url and (problem := access.url_problem(self.base_url)):
            errors["base_url"] = problem
        if env_name_validator.regex.match(self.api_key_env or "") and (problem := access.key_name_problem(self.api_key_env)):
            errors["api_key_env"] = problem
        if errors:
            raise ValidationError(errors)


class JudgeSetting(models.Model):
    """One version of a judge setting. Immutable once it has results or runs."""

    class Kind(models.TextChoices):
        RUBRIC = "rubric", gettext_lazy("Rubric scorer (RealMath-Eval)")
        REPLAY = "replay", gettext_lazy("Replay the record's own prompt")
        INEQ_FINAL_ANSWER = "ineq_final_answer", gettext_lazy("IneqMath final answer (CAS, then LLM)")
        INEQ_TOY_CASE = "ineq_toy_case", gettext_lazy("IneqMath step: toy case")
        INEQ_LOGICAL_GAP = "ineq_logical_gap", gettext_lazy("IneqMath step: logical gap")
        INEQ_NUMERICAL_APPROXIMATION = "ineq_numerical_approximation", gettext_lazy("IneqMath step: numerical approximation")
        INEQ_NUMERICAL_COMPUTATION = "ineq_numerical_computation", gettext_lazy("IneqMath step: numerical computation")
        INEQ_HOLISTIC = "ineq_holistic", gettext_lazy("IneqMath holistic baseline")
        CAS_FINAL_ANSWER = "cas_final_answer", gettext_lazy("CAS final answer only (no LLM)")
        EXTERNAL = "external", gettext_lazy("External results (imported)")

    class Aggregate(models.TextChoices):
        MEAN = "mean", gettext_lazy("Mean")
        MEDIAN = "median", gettext_lazy("Median")

    class AnswerTolerance(models.TextChoices):
        STRICT = "strict", gettext_lazy("Strict (IneqMath): a decimal must be the exact value")
        ROUNDED = "default", gettext_lazy("Rounded: a decimal correctly rounded at its last place counts (0.333 for 1/3)")

    class ApproximateAnswers(models.TextChoices):
        NOT_CREDITED = "wrong", _("Not credited: an answer equal only up to rounding (3.14 for π) scores 0")
        CREDITED = "right", _("Credited: an answer equal up to rounding at its written place scores 1")

    class ReasoningEffort(models.TextChoices):
        NONE = "", "—"
        MINIMAL = "minimal", gettext_lazy("minimal")
        LOW = "low", gettext_lazy("low")
        MEDIUM = "medium", gettext_lazy("medium")
        HIGH = "high", gettext_lazy("high")

    class Strategy(models.TextChoices):
        """Prompt strategies of the rubric judge (grading/judges/strategies.py, docs/judges.md)."""

        REASON_THEN_SCORE = "reason-then-score", _("Reason, then score (default)")
        VERIFICATION_FIRST = "verification-first", _("Verification-First")
        FOLLOW_THROUGH_FIRST = "follow-through-first", _("Follow-Through-First")
        FEW_SHOT = "few-shot", _("Few-shot calibration (experts' gold-scored answers)")

    class SplitRule(models.TextChoices):
        """What a few-shot example may share with an answer judged beside it (never the answer itself)."""

        ANSWER = "answer", _("Not the same answer (same student allowed)")
        STUDENT = "student", _("Not the same answer, not the same student")
        CLASS = "class", _("Not the same student, not the same class (the answer's scan batch, else its import file)")
        EXAM = "exam", _("Not the same student, not the same exam (examples from other exams)")

    class ExampleSource(models.TextChoices):
        """Where a few-shot setting's examples come from (issue 34); the paper shows real students'
        answers as examples to every judged answer, human or synthetic."""

        HUMAN = "human", _("Real students' answers only, for every judged answer (the paper's design)")
        SAME = "same", _("The judged answer's own source (human examples for human answers, synthetic for synthetic)")
        ANY = "any", _("Any answer with a gold score, human or synthetic")

    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField(default=1)
    kind = models.CharField(max_length=40, choices=Kind.choices, default=Kind.RUBRIC)
    strategy = models.CharField(
        max_length=30, choices=Strategy.choices, default=Strategy.REASON_THEN_SCORE, blank=True,
        help_text=_("Prompt strategy of the rubric judge; its template is the default prompt."),
    )
    strategy_version = models.PositiveSmallIntegerField(
        default=1, help_text=_("Version of the strategy's template when this setting was saved."),
    )
    few_shot_k = models.PositiveSmallIntegerField(
        _("examples per question"), default=2, validators=[MinValueValidator(1), MaxValueValidator(8)],
        help_text=_("Few-shot: calibration examples per question (2: one strong, one weak by gold percentile)."),
    )
    split_rule = models.CharField(max_length=10, choices=SplitRule.choices, default=SplitRule.STUDENT, blank=True)
    few_shot_seed = models.IntegerField(default=0, help_text=_("Few-shot: seed of the example choice."))
    few_shot_source = models.CharField(
        _("examples from"), max_length=10, choices=ExampleSource.choices, default=ExampleSource.HUMAN,
        help_text=_("Few-shot: which answers the examples are taken from."),
    )
    few_shot_comments = models.BooleanField(
        default=False, help_text=_("Few-shot: show the expert's step comments with each example."),
    )
    calibration = models.JSONField(
        default=dict, blank=True,
        help_text=_("Few-shot: the examples chosen for this version ({question: [response ids]}), rule, seed, k."),
    )
    prompt_set = models.ForeignKey(
        "grading.PromptSet", on_delete=models.PROTECT, null=True, blank=True, related_name="settings",
        help_text=_("Replay: the named prompt set whose prompts are sent (blank: the prompt each record came with)."),
    )
    endpoint = models.ForeignKey(
        LlmEndpoint, on_delete=models.PROTECT, null=True, blank=True, related_name="judge_settings"
    )
    model = models.CharField(max_length=200, blank=True)
    # 0 by default: a grading study wants the same score for the same answer (issue 39); sampling
    # several scores (`samples`) is the place for a higher temperature.
    temperature = models.FloatField(default=0, null=True, blank=True, validators=[MinValueValidator(0)])
    max_tokens = models.PositiveIntegerField(default=8192, null=True, blank=True)
    reasoning_effort = models.CharField(max_length=10, choices=ReasoningEffort.choices, blank=True)
    samples = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(16)],
        help_text=gettext_lazy("Calls per response; more than one gives a mean/median score and its spread."),
    )
    aggregate = models.CharField(max_length=10, choices=Aggregate.choices, default=Aggregate.MEAN)
    system_prompt = models.TextField(blank=True)
    prompt_template = models.TextField(blank=True, help_text=gettext_lazy("Placeholders: {{ problem }}, {{ reference }}, ..."))
    extra_body = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("Extra request fields, e.g. {\"top_p\": 0.9}."))
    parse_retries = models.PositiveSmallIntegerField(
        default=1, validators=[MaxValueValidator(5)], help_text=gettext_lazy("Ask again this many times when the output cannot be read.")
    )
    answer_tolerance = models.CharField(
        max_length=10, choices=AnswerTolerance.choices, default=AnswerTolerance.STRICT,
        help_text=gettext_lazy("How the CAS compares a decimal final answer with an exact one (CAS final-answer kinds)."),
    )
    approximate_answers = models.CharField(
        max_length=10, choices=ApproximateAnswers.choices, default=ApproximateAnswers.NOT_CREDITED,
        verbose_name=_("approximate answers"),
        help_text=_("How the CAS scores a decimal that equals the gold answer only up to rounding at its written "
                    "place (with the rounded decimal tolerance; the strict one never accepts it)."),
    )
    second_opinion = models.BooleanField(
        default=False,
        help_text=gettext_lazy("Also ask Math-Verify for each final answer; shown beside the CAS verdict, which alone counts."),
    )
    step_report = models.BooleanField(
        _("ask for steps and checkpoints"), default=False,
        help_text=_("Rubric judge only: besides its score, the judge gives the number of the first wrong step of the "
                    "answer (or none) and, for each rubric checkpoint, whether the answer reached it, in a JSON block. "
                    "The score counts whatever that block says; an unreadable block is recorded as unreadable."),
    )
    price_input_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    price_output_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    notes = models.TextField(blank=True)
    previous = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="next_versions"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="unique_judge_config_version")]

    def __str__(self):
        return f"{self.name} v{self.version}"


class PromptSet(models.Model):
    """Prompts imported from a release-format file for answers already in the tool (a prompt
    variant such as Verification-First), under a name; a replay setting may send them."""

    name = models.SlugField(max_length=60, unique=True)
    file_name = models.CharField(max_length=500, blank=True)
    file_sha256 = models.CharField(max_length=64, blank=True)
    report = models.JSONField(default=dict, blank=True, help_text=_("Counts and unmatched records of the imports."))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class PromptSetEntry(models.Model):
    """One answer's prompt in a prompt set, or its mark as a hold-out (a calibration example of
    the set: never judged by a setting that sends the set, never in its metrics)."""

    prompt_set = models.ForeignKey(PromptSet, on_delete=models.CASCADE, related_name="entries")
    response = models.ForeignKey("annotation.Response", on_delete=models.CASCADE, related_name="+")
    query = models.TextField(blank=True)
    holdout = models.BooleanField(default=False)
    import_index = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["prompt_set_id", "response_id"]
        constraints = [models.UniqueConstraint(fields=["prompt_set", "response"], name="unique_prompt_set_entry")]

    def __str__(self):
        return f"{self.prompt_set} · response {self.response_id}"


class JudgeRun(AbstractRun):
    """Running one judge setting over a selection of responses."""

    class Mode(models.TextChoices):
        LIVE = "live", gettext_lazy("live (one call at a time, at once)")
        BATCH = "batch", gettext_lazy("batch (cheaper, slower)")

    class BatchRetry(models.TextChoices):
        LIVE = "live", gettext_lazy("as live calls, at once")
        BATCH = "batch", gettext_lazy("in a next batch")

    setting = models.ForeignKey(JudgeSetting, on_delete=models.PROTECT, related_name="runs", db_column="config_id")
    selection = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("The response-list filters used."))
    note = models.CharField(max_length=300, blank=True)
    # The Batch API (grading/judges/services/batches.py): the run's calls go to the provider in
    # JSONL files (JudgeBatchPart), polled by a self-rescheduling task.
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.LIVE)
    batch_retry = models.CharField(
        max_length=8, choices=BatchRetry.choices, default=BatchRetry.LIVE,
        help_text=gettext_lazy("How lines a batch failed to answer are sent again."),
    )
    batch_token = models.CharField(max_length=32, blank=True, help_text=gettext_lazy(
        "Names this run's files and batches at the provider (their metadata), so a restarted worker finds them."))
    batch_chain = models.CharField(max_length=64, blank=True, help_text=gettext_lazy(
        "The id of the poll task due next; a poll with another id stops (one poll chain per run)."))
    batch_next_poll = models.DateTimeField(null=True, blank=True)
    batch_poll_delay = models.FloatField(default=0.0)
    estimate = models.JSONField(
        default=dict, blank=True,
        help_text=gettext_lazy("The cost estimate made when the run started (grading.judges.services.cost)."),
    )

    def __str__(self):
        return f"Run {self.pk} of {self.setting}"

    @property
    def is_batch(self):
        return self.mode == self.Mode.BATCH


class JudgeResult(models.Model):
    """What one setting version said about one response content.

    Keyed by (setting, response, cache_key), where the cache key fingerprints everything the
    judge is shown; the row exists from the moment a worker claims the work (status
    running), so a redelivered task can neither duplicate it nor call twice.
    """

    class Status(models.TextChoices):
        RUNNING = "running", gettext_lazy("Running")
        OK = "ok", gettext_lazy("OK")
        INVALID = "invalid", gettext_lazy("Invalid output")
        ERROR = "error", gettext_lazy("Call failed")

    setting = models.ForeignKey(JudgeSetting, on_delete=models.PROTECT, related_name="results", db_column="config_id")
    response = models.ForeignKey("annotation.Response", on_delete=models.CASCADE, related_name="judge_results")
    run = models.ForeignKey(JudgeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="produced")
    cache_key = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    score = models.FloatField(null=True, blank=True)
    spread = models.FloatField(null=True, blank=True, help_text=gettext_lazy("Standard deviation over samples (share of dissent for verdicts)."))
    rationale = models.TextField(blank=True)
    raw_output = models.TextField(blank=True)
    parse_status = models.CharField(max_length=24, blank=True)
    step_verdicts = models.JSONField(default=dict, blank=True)
    samples = models.JSONField(default=list, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    copied_from = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    provenance = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("For imported results: file and record."))
    rubric_version = models.PositiveIntegerField(
        null=True, blank=True,
        help_text=gettext_lazy("The question's rubric version the judge was shown (empty: unknown, judged before versioning)."),
    )
    sub_scores = models.JSONField(
        default=dict, blank=True, help_text=gettext_lazy("The judge's points per sub-question label, when it was asked for them.")
    )
    claim_owner = models.CharField(max_length=120, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["response_id", "setting_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["setting", "response", "cache_key"], name="unique_judge_result"),
        ]
        indexes = [
            models.Index(fields=["setting", "cache_key"], name="grading_jud_config__179c40_idx"),
            models.Index(fields=["response", "setting"], name="grading_jud_respons_ff6c5a_idx"),
            models.Index(fields=["run", "status"]),
        ]

    def __str__(self):
        return f"{self.setting} on response {self.response_id}: {self.score}"

    @property
    def total_tokens(self):
        return self.prompt_tokens + self.completion_tokens

    @property
    def output_truncated(self):
        """The model's answer was longer than REALMATH_LLM_MAX_OUTPUT_CHARS and was cut."""
        return any(isinstance(e, dict) and e.get("kind") == "truncated" for e in self.errors or [])


class JudgeRunItem(models.Model):
    """One response of a run's selection, and the result that answers it."""

    class State(models.TextChoices):
        PENDING = "pending", gettext_lazy("Pending")
        OK = "ok", gettext_lazy("OK")
        INVALID = "invalid", gettext_lazy("Invalid output")
        ERROR = "error", gettext_lazy("Call failed")

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="items")
    response = models.ForeignKey("annotation.Response", on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    cached = models.BooleanField(default=False, help_text=gettext_lazy("Answered from an earlier result, without a call."))
    cache_key = models.CharField(max_length=64, blank=True)
    result = models.ForeignKey(JudgeResult, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        ordering = ["run_id", "id"]
        constraints = [models.UniqueConstraint(fields=["run", "response"], name="unique_run_item")]
        indexes = [models.Index(fields=["run", "state"])]

    def __str__(self):
        return f"run {self.run_id}, response {self.response_id}"


class JudgeBatchPart(models.Model):
    """One JSONL file of a batch-mode judge run and the provider batch made from it.

    Its ids are stored the moment the provider gives them (file, then batch), before anything
    else happens, and the provider's metadata names the run and part, so a worker killed at any
    step finds what it had made instead of making it again."""

    class Status(models.TextChoices):
        NEW = "new", gettext_lazy("Not uploaded yet")
        VALIDATING = "validating", gettext_lazy("Validating")
        IN_PROGRESS = "in_progress", gettext_lazy("In progress")
        FINALIZING = "finalizing", gettext_lazy("Finalizing")
        COMPLETED = "completed", gettext_lazy("Completed")
        FAILED = "failed", gettext_lazy("Failed")
        EXPIRED = "expired", gettext_lazy("Expired")
        CANCELLING = "cancelling", gettext_lazy("Cancelling")
        CANCELLED = "cancelled", gettext_lazy("Cancelled")

    TERMINAL = ("completed", "failed", "expired", "cancelled")

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="batch_parts")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.NEW)
    n_lines = models.PositiveIntegerField(default=0)
    n_bytes = models.PositiveBigIntegerField(default=0)
    file_id = models.CharField(max_length=200, blank=True)
    batch_id = models.CharField(max_length=200, blank=True)
    output_file_id = models.CharField(max_length=200, blank=True)
    error_file_id = models.CharField(max_length=200, blank=True)
    request_counts = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=list, blank=True, help_text=gettext_lazy("The provider's batch errors, or ours."))
    provider_times = models.JSONField(default=dict, blank=True, help_text=gettext_lazy(
        "The provider's timestamps (created_at, in_progress_at, expires_at, completed_at...)."))
    cancel_requested = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)
    submitted = models.DateTimeField(null=True, blank=True)
    polled = models.DateTimeField(null=True, blank=True)
    collected = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "number"]
        constraints = [models.UniqueConstraint(fields=["run", "number"], name="unique_batch_part")]

    def __str__(self):
        return f"run {self.run_id}, batch part {self.number}"


class JudgeBatchLine(models.Model):
    """One request of a batch-mode run: the `call_index`-th call a judge makes for a cache key
    (one for most settings; several with samples or parse retries), its body as a live call
    would send it, and its answer or error once a batch has returned it."""

    class State(models.TextChoices):
        QUEUED = "queued", gettext_lazy("Waiting for a batch")
        SENT = "sent", gettext_lazy("In a batch")
        ANSWERED = "answered", gettext_lazy("Answered")
        FAILED = "failed", gettext_lazy("Failed")

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="batch_lines")
    part = models.ForeignKey(JudgeBatchPart, on_delete=models.SET_NULL, null=True, blank=True, related_name="lines")
    cache_key = models.CharField(max_length=64)
    call_index = models.PositiveSmallIntegerField(default=0)
    custom_id = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    body = models.JSONField(default=dict, blank=True)
    n_bytes = models.PositiveIntegerField(default=0)
    sends = models.PositiveSmallIntegerField(default=0, help_text=gettext_lazy("Batches this line was sent in."))
    text = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    answered = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "cache_key", "call_index"], name="unique_batch_line"),
        ]
        indexes = [models.Index(fields=["run", "state"]), models.Index(fields=["part", "custom_id"])]

    def __str__(self):
        return f"run {self.run_id}, {self.custom_id}"


__all__ = [
    "LlmEndpoint", "JudgeSetting", "PromptSet", "PromptSetEntry", "JudgeRun", "JudgeResult", "JudgeRunItem", "JudgeBatchPart", "JudgeBatchLine",
]
