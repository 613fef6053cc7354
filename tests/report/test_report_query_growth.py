"""Issue 34: the methods report reads in a number of queries that does not grow with the number of
answers, labels, study items or edited questions, with every study present (style ablation, OCR
attribution, anchoring, rubric re-judging, an answer-checking setting and a prompt-set replay)."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.labelling.experiment import anchor_shown
from annotation.models import Label, Question, content_hash
from grading.models import JudgeSetting, PromptSet, PromptSetEntry
from studies import style
from studies.models import DerivedAnswer, ProbeItem, ProbeRun
from tests.conftest import make_user
from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db


def _grow(world, n, tag):
    """`n` more answers to each question, judged by every setting, in every study."""
    for q, question in enumerate(world["questions"]):
        answers = make_responses(question, n, source="human" if q % 2 else "synthetic", start=10_000 * q + world["made"])
        set_gold(answers, [(i + q) % 6 for i in range(n)])
        for k, setting in enumerate(world["scores"]):
            make_results(setting, answers, [(i + k) % 6 for i in range(n)], key_prefix=f"{tag}{k}q{q}", rubric_version=1)
        make_results(world["rejudged"], answers, [3] * n, key_prefix=f"{tag}new{q}", rubric_version=2)
        make_results(world["cas"], answers, [i % 2 for i in range(n)], key_prefix=f"{tag}cas{q}")
        PromptSetEntry.objects.bulk_create(PromptSetEntry(prompt_set=world["prompt_set"], response=a, holdout=i == 0)
                                           for i, a in enumerate(answers))
        for answer in answers:
            for probe, run in ((style.PROBE, world["style_run"]), ("raw-ocr", world["ocr_run"])):
                derived = DerivedAnswer.objects.create(response=answer, probe=probe, seed=0, text="x",
                                                       source_hash=content_hash(answer.transcript), change={})
                ProbeItem.objects.create(run=run, derived=derived, probe=probe, state="ok", original_score=2,
                                         derived_score=4 if answer.pk % 3 else 2)
            for expert in world["experts"]:
                shown = anchor_shown(1, answer.pk, expert.pk)
                Label.objects.create(response=answer, annotator=expert, total=3 if shown else 2, submitted=True,
                                     anchoring={"shown": shown, "score": 3, "setting": "s0", "seed": 1})
    world["made"] += n


def _world():
    questions = [make_question(f"Growth problem {q}.", exam_name=f"Growth exam {q % 2}", location=f"G-{q}",
                               gold_answer="x = 1") for q in range(6)]
    Question.objects.filter(pk__in=[q.pk for q in questions[:3]]).update(rubric_version=2)
    prompt_set = PromptSet.objects.create(name="few", file_name="few.json")
    scores = [make_stored_setting(f"s{k}", kind="rubric") for k in range(2)]
    scores.append(make_stored_setting("replay-few", kind="replay", prompt_set=prompt_set))
    rejudged = scores[0]
    cas = make_stored_setting("cas", kind=JudgeSetting.Kind.CAS_FINAL_ANSWER)
    return {"questions": questions, "scores": scores, "rejudged": rejudged, "cas": cas, "prompt_set": prompt_set,
            "style_run": ProbeRun.objects.create(setting=scores[0], probes=[style.PROBE], status="done"),
            "ocr_run": ProbeRun.objects.create(setting=scores[1], probes=["raw-ocr"], status="done"),
            "experts": [make_user(f"growth-{i}", "annotator") for i in range(2)], "made": 0}


def test_report_queries_do_not_grow_with_answers_labels_or_study_items(reviewer_client):
    world = _world()
    _grow(world, 3, "a")
    url = reverse("grading:methods_report")
    reviewer_client.get(url)  # session, role and template caches
    counts = []
    for n, tag in ((0, ""), (9, "b")):
        if n:
            _grow(world, n, tag)
        with CaptureQueriesContext(connection) as queries:
            response = reviewer_client.get(url, {"format": "markdown"})
        assert response.status_code == 200
        counts.append(len(queries))
    text = response.content.decode()
    for absent in ("Style ablation: not run.", "OCR attribution: not run.", "Anchoring experiment: not run.",
                   "Rubric re-judging: not run."):
        assert absent not in text
    assert "prompt set few (few.json)" in text and "Final answers against the gold answer" in text
    assert counts[0] == counts[1], counts
