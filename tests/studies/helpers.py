"""Scripted judges for the studies tests: server defaults that read the student's answer; answers
every probe can change; a finished error-geometry run."""
import json
import re

from tests.llm_server import Reply, message_text

ANSWER = re.compile(r"Student answer:\n(.*?)\n\nAnswer in plain text", re.DOTALL)


def answer_of(payload):
    match = ANSWER.search(message_text(payload))
    return match.group(1) if match else ""


def scored(rule):
    """A server default giving rule(answer text) as the rubric score."""
    def reply(payload):
        return Reply(f"Reasoning.\nOverall Score: {rule(answer_of(payload))}\nFine.")

    return reply


# A fair judge: no final answer line (the \boxed answer), fewer points.
FAIR = scored(lambda text: 8 if "\\boxed" in text else 3)
# A judge that ignores final answers: the same score whatever the answer ends with.
IGNORES_FINAL = scored(lambda text: 8)
# A judge fooled by notation: fractions written with a slash lose points.
FOOLED_BY_NOTATION = scored(lambda text: 8 if "\\dfrac" in text else 4)


def make_answers(question, n=3):
    """Answers every probe can change (a boxed final answer, fractions, independent lines, a computation)."""
    from annotation.models import Response, content_hash

    rows = []
    for i in range(n):
        text = (f"Student {i} <b>bold?</b>\n$x = \\dfrac{{{2 * i + 2}}}{{2}}$\n$3 \\cdot {i} = {3 * i}$\n"
                f"Therefore $x \\le {i + 2}$.\nAnswer: $\\boxed{{{i + 1}}}$")
        rows.append(Response(question=question, student_id=f"s{i}", transcript=text, transcript_hash=content_hash(text),
                             gold_score=8))
    return Response.objects.bulk_create(rows)


def finished_run(setting, names=("all",)):
    from studies import services

    return services.run_inline(services.start_probe_run(setting, probe_names=list(names), enqueue=False))


def lexical_geometry_run(text=""):
    """A finished error-geometry run on the lexical baseline (no model) over 16 segments, each
    starting with `text` when given."""
    from studies.geometry import services  # a helper module of the tests: imported when used

    start = f"{text} " if text else ""
    lines = [json.dumps({"segment_text": f"{start}{s} {i}, therefore y = {i}", "sample_id": f"{s}{i}",
                         "question": f"Q{i % 3}", "sub_id": "(2)", "real_score": 0, "max_score": 2,
                         "analysis_subset": s})
             for s in ("human", "synthetic") for i in range(8)]
    run = services.start_run(segments=services.parse_segments_jsonl("\n".join(lines)), bootstrap=20, permutations=20,
                             cluster=False, enqueue=False)
    return services.run_inline(run)
