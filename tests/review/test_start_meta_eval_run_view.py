"""Starting a meta-evaluation run (grading.review.views.start_meta_eval_run, /grading/review/meta-eval-runs/): never silent."""
import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_propose_categories_without_a_model_says_why(reviewer_client, cases):
    """The button is never silent: no `required` attribute stops the form in the browser without a
    word; the server says what is missing, and the field keeps the last model used."""
    from grading.models import LlmEndpoint

    endpoint = LlmEndpoint.objects.create(name="local", base_url="http://127.0.0.1:9/v1", api_key_env="")
    page = reviewer_client.get(reverse("grading:review_disagreements"), {"setting": cases["config"].pk})
    form = page.content.decode().split('id="prelabel"', 1)[1]
    assert 'name="model"' in form and " required" not in form.split("</form>", 1)[0]
    response = reviewer_client.post(
        reverse("grading:review_meta_eval_run_start"),
        {"endpoint": endpoint.pk, "setting": cases["config"].pk, "threshold": "2", "model": ""}, follow=True,
    )
    assert "Name the model the meta-evaluator should use." in response.content.decode()
