"""Builders for labelling tests: a question with a real cumulative rubric; selecting transcript text
in the browser; step labels that quote math, and checking that the quotes render."""
from decimal import Decimal

from django.utils import timezone

from annotation.models import Exam, Label, Question, RubricCheckpoint, StepLabel, SubQuestion, content_hash
from annotation.rubric import parse_checkpoints

from ..factories import make_responses

REFERENCE = (
    "(1) Because $a=1$ we get $b=2$. ------2 points\n"
    "Hence $c=3$. ------3 points\n"
    "(2) Differentiate: $f'(x)=2x$. ------5 points\n"
    "So the minimum is $0$. ------7 points"
)


def rubric_question(statement="Let $f(x)=x^2$. (1) ... (2) ...", *, exam_name="Labelling exam", blind=True):
    """Full score 7; (1) max 3 with checkpoints at 2 and 3; (2) max 4 with checkpoints at 5 and 7."""
    exam, _ = Exam.objects.get_or_create(name=exam_name, defaults={"blind": blind})
    question = Question.objects.create(
        exam=exam, statement=statement, statement_hash=content_hash(statement), reference_solution=REFERENCE,
        full_score=Decimal(7), location="L-01", level="high",
    )
    subs = {
        "(1)": SubQuestion.objects.create(question=question, label="(1)", order=0, max_points=3),
        "(2)": SubQuestion.objects.create(question=question, label="(2)", order=1, max_points=4),
    }
    RubricCheckpoint.objects.bulk_create(
        RubricCheckpoint(
            question=question, sub_question=subs[c.sub_label], order=c.order, cumulative_points=c.cumulative_points,
            text=c.text, start=c.start, end=c.end,
        )
        for c in parse_checkpoints(REFERENCE)
    )
    return question


def checkpoint_ids(question):
    return list(question.checkpoints.order_by("order").values_list("pk", flat=True))


def labelled_setup(n=3, **kwargs):
    question = rubric_question(**kwargs)
    return question, make_responses(question, n)


def full_label(c1=3, c2=4, **extra):
    return {"sub_scores": {"(1)": c1, "(2)": c2}, **extra}


def select_text(page, text):
    """Select the plain text `text` of the transcript (inside one segment)."""
    page.evaluate(
        """(text) => {
            const seg = [...document.querySelectorAll('#transcript .seg')].find(s => s.textContent.includes(text));
            const node = seg.firstChild, at = node.data.indexOf(text);
            const range = document.createRange();
            range.setStart(node, at); range.setEnd(node, at + text.length);
            const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
        }""",
        text,
    )


QUOTES = {"delimited": "$y=\\cos x$", "bare": "\\frac{3}{2}x^{2}"}


def quoted_gold(response, annotator):
    """A submitted label of `response` whose step labels quote math, with and without `$`."""
    label = Label.objects.create(response=response, annotator=annotator, total=5, sub_scores={"(1)": 5},
                                 submitted=True, submitted_at=timezone.now())
    for index, quote in enumerate(QUOTES.values()):
        StepLabel.objects.create(label=label, start=index, end=index + 1, quote=quote, verdict="correct")
    return label


def assert_quotes_rendered(page, selector):
    """Each step-label quote shows KaTeX, not its TeX source."""
    quotes = page.locator(selector)
    assert quotes.count() == len(QUOTES)
    for index in range(len(QUOTES)):
        quote = quotes.nth(index)
        quote.locator(".katex").first.wait_for()
        shown = quote.inner_text()
        assert "$" not in shown and "\\cos" not in shown and "\\frac" not in shown, shown

