"""The rubric rule lives once on each side: the server's (annotation/labelling/rules.py: `propose`,
`Proposal.admits`) has the last word, the labelling screen's one client copy
(static/js/labelling/rubric.js: `proposal`, `admits`) gives instant feedback. Both run here on the
same cases, every mark combination of several rubrics and points at and around each boundary,
and must agree on each."""
import itertools
import json
from decimal import Decimal

import pytest

from annotation.labelling.rules import RubricCheckpointInfo, RubricGroup, propose
from tests.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Points of each checkpoint relative to its sub-question: increasing, equal, falling (markers
# restarting per sub-question), fractional, and a zero step.
RUBRICS = [["2", "5", "8"], ["3", "3", "6"], ["5", "3", "8"], ["0.5", "1.25", "2"], ["0", "4"], ["7"]]
MARKS = [None, "reached", "partly", "not_reached"]


def cases():
    for points in RUBRICS:
        checkpoints = [{"id": 10 + i, "points": p} for i, p in enumerate(points)]
        values = sorted({Decimal(0), *(Decimal(p) for p in points)})
        candidates = sorted({v + d for v in values for d in (Decimal("-0.01"), Decimal(0), Decimal("0.01"))} - {Decimal("-0.01")})
        for combination in itertools.product(MARKS, repeat=len(points)):
            marks = {str(c["id"]): m for c, m in zip(checkpoints, combination) if m}
            yield {"checkpoints": checkpoints, "marks": marks, "candidates": [str(c) for c in candidates]}


def server_answer(case):
    group = RubricGroup("", None, None, [
        RubricCheckpointInfo(id=c["id"], order=i, cumulative=Decimal(c["points"]), points=Decimal(c["points"]), text="")
        for i, c in enumerate(case["checkpoints"])
    ])
    proposal = propose(group, case["marks"])
    if proposal is None:
        return None
    return {"low": int(proposal.low * 100), "high": int(proposal.high * 100), "open": proposal.high_open,
            "admits": [proposal.admits(Decimal(c)) for c in case["candidates"]]}


CLIENT = """async (cases) => {
  const rubric = await import("/static/js/labelling/rubric.js");
  return cases.map((c) => {
    const p = rubric.proposal(c.checkpoints, c.marks);
    if (p === null) return null;
    return { low: p.low, high: p.high, open: p.open, admits: c.candidates.map((x) => rubric.admits(p, rubric.cents(x))) };
  });
}"""


def test_client_and_server_rubric_rules_agree_on_every_case(page, live_server, annotator):
    all_cases = list(cases())
    assert len(all_cases) == 4 * 4 ** 3 + 4 ** 2 + 4  # 276
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/questions/")
    client = page.evaluate(CLIENT, all_cases)
    disagreements = [
        {"case": case, "server": server, "client": answer}
        for case, answer in zip(all_cases, client)
        if (server := server_answer(case)) != answer
    ]
    assert not disagreements, json.dumps(disagreements[:3], indent=1)
    assert sum(answer is not None for answer in client) > 200  # most cases mark something
