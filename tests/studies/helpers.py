"""Scripted judges for the studies tests: server defaults that read the student's answer."""
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
