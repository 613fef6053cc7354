"""Reviewer pages in a real browser on the RealMath-Eval sample: assignment, agreement matrix,
adjudication by keyboard, the queue and the history (screenshots in test-artifacts/)."""
import pytest

from annotation.labelling import services
from annotation.models import Adjudication, Label, Question, Response

from ..conftest import login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def label_sample(annotator, annotator2):
    """Both annotators label the human answers of the first sample question; ann2 is harsher on a few."""
    question = Question.objects.order_by("pk").first()
    responses = list(Response.objects.filter(question=question, source="human").order_by("pk")[:8])
    services.assign_responses(
        responses=Response.objects.filter(pk__in=[r.pk for r in responses]), annotators=[annotator, annotator2],
        per_response=2, strategy="round_robin",
    )
    labels = [s.label for s in question.sub_questions.all()]
    for index, response in enumerate(responses):
        imported = Label.objects.get(response=response, is_imported=True).sub_scores
        for user, harsh in ((annotator, 0), (annotator2, 3 if index % 3 == 0 else (1 if index % 3 == 1 else 0))):
            scores = {label: imported.get(label, 0) for label in labels}
            first = labels[0]
            scores[first] = max(0, scores[first] - harsh)
            services.save_label(
                response=response, user=user, data={"sub_scores": scores, "override_reason": "sample"},
                base_version=0, submit=True,
            )
    return question, responses


def test_reviewer_pages(page, live_server, sample_data, annotator, annotator2, reviewer):
    question, responses = label_sample(annotator, annotator2)
    login(page, live_server, reviewer.username)

    page.goto(f"{live_server.url}/assign/")
    page.wait_for_selector("#load-table")
    assert "ann1" in page.inner_text("#load-table")
    screenshot(page, "assign_page")

    page.goto(f"{live_server.url}/agreement/?metric=kappa")
    page.wait_for_selector("#matrix td.cell")
    assert page.locator("#matrix tbody tr").count() == 3  # (imported), ann1, ann2
    screenshot(page, "agreement_page")

    page.goto(f"{live_server.url}/adjudication/")
    page.wait_for_selector("#adjudication-table")
    rows = page.locator("#adjudication-table tbody tr")
    assert rows.count() >= 2
    screenshot(page, "adjudication_queue")
    rows.first.locator("a").click()
    page.wait_for_selector("#adjudicate-form")
    page.wait_for_selector("#transcript .katex")
    adjudicated = int(page.url.split("/adjudication/")[1].split("/")[0])
    page.keyboard.press("2")  # pick the second label
    assert page.locator(".label-card.chosen").count() == 1
    screenshot(page, "adjudicate_page")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda url: f"/adjudication/{adjudicated}/" not in url)
    decision = Adjudication.objects.get(response_id=adjudicated)
    assert decision.chosen_label.annotator == annotator2
    assert Response.objects.get(pk=adjudicated).gold_status == "adjudicated"

    page.goto(f"{live_server.url}/label/{responses[0].pk}/history/")
    page.wait_for_selector(".history")
    screenshot(page, "label_history")


def test_annotator_queue(page, live_server, sample_data, annotator, annotator2):
    label_sample(annotator, annotator2)
    question = Question.objects.order_by("pk").last()
    services.assign_responses(responses=Response.objects.filter(question=question), annotators=[annotator],
                              per_response=1, strategy="round_robin")
    login(page, live_server, annotator.username)
    page.goto(f"{live_server.url}/label/?state=all")
    page.wait_for_selector("#queue-table")
    assert "submitted" in page.inner_text("#queue-table") and "to do" in page.inner_text("#queue-table")
    screenshot(page, "label_queue")
    page.goto(f"{live_server.url}/")
    page.wait_for_selector("#labelling-home")
    page.click("#labelling-home button.primary")
    page.wait_for_selector("#label-form")
    page.wait_for_selector("#transcript .katex")
    screenshot(page, "label_page_sample")
