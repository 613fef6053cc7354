"""A generation run that ends before the page's first poll still shows its rows as written (the
page reloads once), not "Pending" under "Done"."""
import pytest

from grading.generation import services as generation
from grading.models import GenerationRun
from tests.conftest import login
from tests.llm_server import Reply

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_rows_follow_a_run_that_ends_before_the_first_poll(page, live_server, llm_server, endpoint, rubric_question,
                                                            reviewer):
    from annotation.models import Question

    llm_server.default = Reply("(1) x = 2\n(2) x = -2")
    run = generation.start_generation_run(endpoint=endpoint, models=["alpha-7b"], temperatures=[0, 1],
                                          questions=Question.objects.filter(pk=rubric_question.pk), enqueue=False)
    login(page, live_server, reviewer.username)
    held, released = [], []
    page.route("**/progress.json", lambda route: route.continue_() if released else held.append(route))
    page.goto(f"{live_server.url}/grading/judges/generation/{run.pk}/")
    assert page.locator("#results-table tbody tr:has-text('Pending')").count() == 2
    generation.run_generation_inline(GenerationRun.objects.get(pk=run.pk))  # done before any poll answers
    released.append(True)
    for route in held:
        route.continue_()
    page.wait_for_selector("#results-table tbody tr:has-text('Written')")
    assert page.locator("#results-table tbody tr:has-text('Pending')").count() == 0
    assert page.inner_text("#p-status").startswith("Done")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_rows_follow_the_run_while_it_runs(page, live_server, llm_server, endpoint, rubric_question, reviewer,
                                           language):
    """Without a reload: the row of each answer written turns Written while the others still wait."""
    from accounts.services import set_user_language
    from annotation.models import Question
    from tests.conftest import screenshot

    set_user_language(reviewer, language)
    llm_server.default = Reply("(1) x = 2\n(2) x = -2")
    run = generation.start_generation_run(endpoint=endpoint, models=["alpha-7b"], temperatures=[0, 1],
                                          questions=Question.objects.filter(pk=rubric_question.pk), enqueue=False)
    first, second = run.items.order_by("pk")
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/grading/judges/generation/{run.pk}/")
    page.evaluate("() => { window.__sameDocument = true; }")
    pending_word, written_word = ("Pending", "Written") if language == "en" else ("待处理", "已写")
    assert page.locator(f"#results-table tbody tr:has-text('{pending_word}')").count() == 2
    generation.process_generation_chunk(run.pk, run.epoch, [first.pk])  # one answer written, the run goes on
    page.wait_for_selector(f"#results-table tbody tr:has-text('{written_word}')")
    assert page.locator(f"#results-table tbody tr:has-text('{pending_word}')").count() == 1
    assert page.inner_text("#p-count") == "1 / 2"
    assert page.evaluate("() => window.__sameDocument === true")  # the rows changed, the page did not reload
    assert page.locator("#results-table tbody tr a[href*='/responses/']").count() == 1
    screenshot(page, f"generation-rows-live-{language}")
    generation.process_generation_chunk(run.pk, run.epoch, [second.pk])
    page.wait_for_function("() => document.querySelectorAll('#results-table tbody tr a[href*=\"/responses/\"]').length === 2")
    assert page.locator(f"#results-table tbody tr:has-text('{pending_word}')").count() == 0
