"""
The demo's judge data (grading's `demo_section`, run by ``manage.py load_demo`` through
annotation.demo): the sample's released judge outputs and meta-evaluation labels, and finished runs
of clearly named scripted judges, so that a newcomer sees metrics, the disagreement queue,
categories and step-judge validation full after ``make run``.

Everything goes through the real services (run selection, claims, caching, result recording,
generation, the meta-evaluator, and two prompt strategies of the rubric judge, Verification-First
and few-shot, so the "Compare settings" page has a finished paired comparison) with the LLM call answered in-process by the scripted model
of llm.scripted: no server is needed, nothing is random, and running it again adds
nothing. The scores and verdicts are made up, and every name says so.

The endpoint the scripted settings name points at the local scripted server
(``.venv/bin/python tests/llm_server.py --port 8001``), so further runs started from the pages
work once that server is started.
"""
from django.core.exceptions import ValidationError
from django.db.models import Q

from annotation.demo import DEMO_DIR, INEQMATH_EXAM, REALMATH_EXAM, quietly
from annotation.models import Exam, Question
from llm import scripted

from .generation import services as generation
from .judges import services
from .models import GenerationRun, JudgeRun, JudgeSetting, LlmEndpoint, MetaEvalRun
from .review import selectors as review_selectors
from .review import services as review_services

ENDPOINT_NAME = "Scripted local server (tests/llm_server.py, port 8001)"
ENDPOINT_URL = "http://127.0.0.1:8001/v1"
MODEL = "scripted"
RUBRIC_SETTING = "Scripted demo judge (made-up scores)"
# Issue 37: a rubric judge asked for its step report (first wrong step, checkpoints reached), which
# the Validity view checks against the demo experts' made-up step labels and checkpoint marks.
STEP_REPORT_SETTING = "Scripted step-report judge (made-up)"
GENERATION_NAME = "Scripted demo students (made-up answers)"
STUDENT_MODELS = ("scripted-student-a", "scripted-student-b")
INEQMATH_SETTINGS = (
    (JudgeSetting.Kind.INEQ_FINAL_ANSWER, "Scripted demo: final answer (made-up verdicts)"),
    (JudgeSetting.Kind.INEQ_TOY_CASE, "Scripted demo: toy case (made-up verdicts)"),
    (JudgeSetting.Kind.INEQ_LOGICAL_GAP, "Scripted demo: logical gap (made-up verdicts)"),
    (JudgeSetting.Kind.INEQ_NUMERICAL_APPROXIMATION, "Scripted demo: numerical approximation (made-up verdicts)"),
    (JudgeSetting.Kind.INEQ_NUMERICAL_COMPUTATION, "Scripted demo: numerical computation (made-up verdicts)"),
    (JudgeSetting.Kind.INEQ_HOLISTIC, "Scripted demo: holistic (made-up verdicts)"),
)
# Issue 27: a finished comparison of two scripted prompt strategies on the same answers.
STRATEGY_SETTINGS = (
    ("verification-first", "Scripted demo: Verification-First (made-up scores)"),
    ("few-shot", "Scripted demo: few-shot, 2 examples per question (made-up scores)"),
)
NOTE = "Made-up output of the scripted model (llm.scripted): it shows the tool, it measures no model."


def load_demo():
    """grading's part of `manage.py load_demo` (`demo_section` on its AppConfig, read by
    annotation.demo): the sample's released judge outputs and meta-evaluation labels, then the
    scripted runs; the lines to print."""
    lines = quietly("import_judge_results", str(DEMO_DIR / "meta_eval_input_examples.json"), setting="released-judge")
    lines += quietly("import_meta_eval_labels", str(DEMO_DIR / "meta_eval_labels_examples.json"),
                     setting="released meta-eval labels")
    realmath, ineqmath = demo_exams(REALMATH_EXAM, INEQMATH_EXAM)
    if realmath is None or ineqmath is None:
        return lines
    return lines + load_scripted_judges(realmath_exam=realmath, ineqmath_exam=ineqmath)


def load_scripted_judges(*, realmath_exam, ineqmath_exam):
    """Record the demo's scripted runs (idempotent); return lines saying what was done."""
    endpoint = scripted_endpoint()
    if endpoint is None:
        return [f"Scripted demo judges skipped: {ENDPOINT_URL} is not an allowed LLM host here."]
    questions = Question.objects.filter(exam=ineqmath_exam, kind__in=[Question.Kind.BOUND, Question.Kind.RELATION])
    lines = [_students(questions, endpoint)]
    for kind, name in INEQMATH_SETTINGS:
        lines.append(_run(_setting(name, kind, endpoint), {"exam": str(ineqmath_exam.pk), "source": "synthetic"}))
    strategy_settings = []
    for strategy, name in STRATEGY_SETTINGS:  # before the rubric judge, which the review pages open on
        try:
            setting = _setting(name, JudgeSetting.Kind.RUBRIC, endpoint, strategy=strategy)
        except ValidationError as exc:  # few-shot needs gold scores: the release sample has them
            lines.append(f"{name}: {' '.join(exc.messages)}")
            continue
        strategy_settings.append(setting)
        lines.append(_run(setting, {"exam": str(realmath_exam.pk)}))
    step_report = _setting(STEP_REPORT_SETTING, JudgeSetting.Kind.RUBRIC, endpoint, step_report=True)
    lines.append(_run(step_report, {"exam": str(realmath_exam.pk)}))
    # The rubric judge last: the review pages open on the newest results, and these have gold scores.
    rubric = _setting(RUBRIC_SETTING, JudgeSetting.Kind.RUBRIC, endpoint)
    lines.append(_run(rubric, {"exam": str(realmath_exam.pk)}))
    lines.append(_proposals(rubric, endpoint))
    if len(strategy_settings) == 2:
        query = "&".join(f"setting={s.pk}" for s in strategy_settings)
        lines.append(f"Scripted strategies compared (made-up scores): /grading/review/compare/?{query}")
    return [line for line in lines if line]


def scripted_endpoint():
    """The endpoint of the local scripted server (made once); None where its host is not allowed."""
    endpoint = LlmEndpoint.objects.filter(name=ENDPOINT_NAME).first()
    if endpoint is not None:
        return endpoint
    try:
        return services.save_endpoint(name=ENDPOINT_NAME, base_url=ENDPOINT_URL, api_key_env="", max_concurrency=8,
                                      timeout_seconds=30)
    except ValidationError:
        return None


def _setting(name, kind, endpoint, **fields):
    existing = JudgeSetting.objects.filter(name=name).order_by("-version").first()
    if existing is not None:
        return existing
    return services.create_judge_setting(
        name=name, kind=kind, endpoint=endpoint, model=MODEL, temperature=0.0, max_tokens=2048, samples=1,
        parse_retries=0, notes=NOTE, **fields,
    )


def _run(setting, params):
    """One finished run of `setting` over `params`; a run left unfinished is completed, a finished one kept."""
    run = setting.runs.order_by("-created").first()
    if run is not None and run.status == JudgeRun.Status.DONE:
        return ""
    if run is None:
        try:
            run = services.start_judge_run(setting, params=params, enqueue=False, note="demo: scripted, made-up")
        except services.RunRefused as exc:
            return f"{setting}: {' '.join(exc.messages)}"
    elif run.status != JudgeRun.Status.RUNNING:
        run = services.resume_judge_run(run, enqueue=False)
    run = services.run_inline(run, complete=scripted.complete)
    counts = run.items.values_list("state", flat=True)
    return f"{setting}: run #{run.pk} judged {len(counts)} answers ({sum(1 for s in counts if s == 'ok')} ok)."


def _students(questions, endpoint):
    """Two scripted 'students' answer every IneqMath sample problem (the step judges' input)."""
    run = GenerationRun.objects.filter(name=GENERATION_NAME).order_by("-created").first()
    if run is not None and run.status == GenerationRun.Status.DONE:
        return ""
    if run is None:
        if not questions.exists():
            return ""
        run = generation.start_generation_run(
            endpoint=endpoint, models=list(STUDENT_MODELS), temperatures=[0.7], questions=questions,
            name=GENERATION_NAME, enqueue=False,
        )
    elif run.status != GenerationRun.Status.RUNNING:
        run = generation.resume_generation_run(run, enqueue=False)
    run = generation.run_generation_inline(run, complete=scripted.complete)
    return f"{GENERATION_NAME}: generation run #{run.pk} wrote {run.items.filter(state='ok').count()} answers."


def _proposals(setting, endpoint):
    """The scripted meta-evaluator proposes a category for each case of the judge's queue
    (proposals only: a person confirms them on the review screen)."""
    if MetaEvalRun.objects.filter(endpoint=endpoint, model=MODEL).exists():
        return ""
    scope = review_selectors.Scope(setting=setting)
    try:
        run = review_services.start_meta_eval_run(endpoint=endpoint, model=MODEL, scope=scope, enqueue=False)
    except services.RunRefused:
        return ""
    review_services.run_meta_eval_inline(run, complete=scripted.complete)
    return f"Scripted meta-evaluator: run #{run.pk} proposed categories for {run.proposals.count()} cases."


def demo_exams(realmath_name, ineqmath_name):
    """The demo's two exams (None where not imported)."""
    found = {exam.name: exam for exam in Exam.objects.filter(Q(name=realmath_name) | Q(name=ineqmath_name))}
    return found.get(realmath_name), found.get(ineqmath_name)

