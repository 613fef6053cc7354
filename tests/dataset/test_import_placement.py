"""One exam per release (issue 34): the full release overlaps the demo sample (2 of its 14
questions), and an import says what to do with questions already in another exam
(annotation/importers/placement.py): ask, join, move or keep; the report says where each went."""
import pytest
from django.core.management import call_command

from annotation.importers import import_realmath
from annotation.importers.common import ImportFormatError
from annotation.importers.placement import ExamOverlap
from annotation.models import Exam, ImportReport, Label, Question, Response
from tests.conftest import REALMATH_HUMAN, ROOT

FULL = ROOT / "fixtures" / "realmath_eval_full" / "realmath_eval.json"
SAMPLE = "RealMath-Eval sample"

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_sample(db):
    """The demo's sample imported as `load_demo` does: 2 questions, 32 answers, one expert label."""
    import_realmath(REALMATH_HUMAN.read_bytes(), REALMATH_HUMAN.name, exam_name=SAMPLE)
    response = Response.objects.order_by("id").first()
    Label.objects.create(response=response, sub_scores={}, total=1, submitted=True)
    return Exam.objects.get(name=SAMPLE)


def _full(**kwargs):
    return import_realmath(FULL.read_bytes(), FULL.name, **kwargs)


def _where():
    """{exam name: number of the release's questions in it}."""
    counts = {}
    for name in Question.objects.values_list("exam__name", flat=True):
        counts[name] = counts.get(name, 0) + 1
    return counts


def test_ask_imports_nothing_and_names_the_exam_that_holds_part_of_the_release(demo_sample):
    before = (Exam.objects.count(), Question.objects.count(), Response.objects.count(), ImportReport.objects.count())
    with pytest.raises(ExamOverlap) as caught:
        _full(exam_name="RealMath-Eval", overlap="ask")
    assert [(exam.name, n) for exam, n in caught.value.holders] == [(SAMPLE, 2)]
    assert caught.value.questions == 14
    assert "2 of the file's 14 questions are already in other exams: “RealMath-Eval sample” (2 questions)" in str(
        caught.value)
    assert (Exam.objects.count(), Question.objects.count(), Response.objects.count(),
            ImportReport.objects.count()) == before


def test_join_imports_the_release_into_the_exam_that_holds_part_of_it(demo_sample):
    result = _full(exam_name="RealMath-Eval", overlap="join")
    assert _where() == {SAMPLE: 14}
    assert not Exam.objects.filter(name="RealMath-Eval").exists()
    assert result.counts["exam_id"] == demo_sample.pk
    assert result.counts["responses_created"] == 224 - 32 and result.counts["responses_skipped"] == 32
    hows = [row["how"] for row in result.counts["questions"]]
    assert hows.count("created") == 12 and hows.count("here") == 2
    assert {row["exam"] for row in result.counts["questions"]} == {demo_sample.pk}


def test_move_brings_the_overlapping_questions_with_their_answers_and_labels(demo_sample):
    moved_ids = set(Question.objects.values_list("id", flat=True))
    labels = Label.objects.count()
    result = _full(exam_name="RealMath-Eval", overlap="move")
    release = Exam.objects.get(name="RealMath-Eval")
    assert _where() == {"RealMath-Eval": 14}
    assert Response.objects.filter(question__exam=release).count() == 224
    assert Label.objects.count() == labels + 224 - 32  # the sample's labels came along, none lost
    assert Label.objects.filter(annotator__isnull=True, is_imported=False).count() == 1
    assert result.counts["questions_moved"] == 2
    assert result.counts["skipped_by_exam"] == {str(release.pk): 32}  # the skipped answers now sit here
    moved = [row for row in result.counts["questions"] if row["how"] == "moved"]
    assert {row["id"] for row in moved} == moved_ids
    assert all(row["from"] == demo_sample.pk and row["exam"] == release.pk for row in moved)
    # The move is in each question's history.
    question = Question.objects.get(pk=next(iter(moved_ids)))
    assert [h.exam_id for h in question.history.order_by("history_id")][-2:] == [demo_sample.pk, release.pk]


def test_keep_leaves_them_split_and_a_later_move_brings_the_release_together(demo_sample):
    result = _full(exam_name="RealMath-Eval", overlap="keep")
    assert _where() == {"RealMath-Eval": 12, SAMPLE: 2}
    assert [row["how"] for row in result.counts["questions"]].count("elsewhere") == 2
    # Re-importing under the sample's name with "move" brings the other 12 into it: nothing added.
    again = _full(exam_name=SAMPLE, overlap="move")
    assert _where() == {SAMPLE: 14}
    assert again.counts["responses_created"] == 0 and again.counts["responses_skipped"] == 224
    assert again.counts["questions_moved"] == 12


def test_join_is_refused_when_the_release_is_already_in_two_exams(demo_sample):
    _full(exam_name="RealMath-Eval", overlap="keep")
    with pytest.raises(ImportFormatError, match="in more than one exam"):
        _full(exam_name="Third", overlap="join")
    assert not Exam.objects.filter(name="Third").exists()


def test_moving_out_of_a_blind_exam_into_an_open_one_is_refused(demo_sample):
    Exam.objects.create(name="Open", blind=False)
    with pytest.raises(ImportFormatError, match="blind exam"):
        _full(exam_name="Open", overlap="move")
    assert _where() == {SAMPLE: 2}


def test_an_unknown_choice_is_refused_before_anything_is_written(demo_sample):
    with pytest.raises(ImportFormatError, match="Unknown choice 'merge'"):
        _full(exam_name="RealMath-Eval", overlap="merge")


def test_the_command_asks_then_moves_and_prints_where_each_question_went(demo_sample, capsys):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--overlap join, move or keep"):
        call_command("import_realmath", str(FULL), "--exam", "RealMath-Eval")
    out = []

    class Out:
        def write(self, text):
            out.append(text)

        def flush(self):
            pass

    call_command("import_realmath", str(FULL), "--exam", "RealMath-Eval", "--overlap", "move", stdout=Out())
    text = "".join(out)
    assert text.count("moved from RealMath-Eval sample into RealMath-Eval, with its answers") == 2
    assert text.count("added to RealMath-Eval") == 12
    # --exam takes an id too: the release's exam by its id, everything already there.
    release = Exam.objects.get(name="RealMath-Eval")
    call_command("import_realmath", str(FULL), "--exam", str(release.pk), stdout=Out())
    assert "".join(out).count("already in RealMath-Eval") == 14
