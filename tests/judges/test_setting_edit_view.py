"""Editing a setting (grading.judges.views.setting_edit, /grading/judges/settings/<pk>/edit/): in place while unused, a new version once used."""
import pytest
from django.urls import reverse

from grading.models import JudgeSetting

from .conftest import form_data
from .helpers import run_now, score_by_answer

pytestmark = pytest.mark.django_db


def test_create_edit_in_place_then_new_version(admin_client_, endpoint, llm_server, responses,
                                                django_capture_on_commit_callbacks):
    response = admin_client_.post(reverse("grading:judge_setting_create"), form_data(endpoint))
    setting = JudgeSetting.objects.get(name="rubric-a")
    assert response.status_code == 302 and setting.version == 1 and setting.created_by is not None

    edit_url = reverse("grading:judge_setting_edit", args=[setting.pk])
    admin_client_.post(edit_url, form_data(endpoint, temperature="0.2", name="ignored"))
    setting.refresh_from_db()
    assert setting.temperature == 0.2 and setting.name == "rubric-a" and JudgeSetting.objects.count() == 1

    llm_server.default = score_by_answer({})
    run_now(django_capture_on_commit_callbacks, setting)
    page = admin_client_.get(edit_url)
    assert "saving creates version 2" in page.content.decode()
    response = admin_client_.post(edit_url, form_data(endpoint, temperature="0.9", extra_body='{"top_p": 0.5}'))
    newer = JudgeSetting.objects.get(name="rubric-a", version=2)
    assert response["Location"] == reverse("grading:judge_setting_detail", args=[newer.pk])
    assert (newer.temperature, newer.extra_body, newer.previous_id) == (0.9, {"top_p": 0.5}, setting.pk)
    setting.refresh_from_db()
    assert setting.temperature == 0.2 and setting.extra_body == {}
    home = admin_client_.get(reverse("grading:judges_home"))
    assert [c.version for c in home.context["configs"]] == [2]
    detail = admin_client_.get(reverse("grading:judge_setting_detail", args=[setting.pk])).content.decode()
    assert "A newer version exists" in detail and "Overall Score: X" in detail  # the default template
