"""A kind that calls no LLM (the CAS-only final-answer check) records no temperature: the new
setting's default 0.7 is dropped, and sending it again never makes a new version."""
import pytest

from grading.judges import selectors, services
from grading.models import JudgeSetting
from tests.factories import make_question, make_responses, make_results

pytestmark = pytest.mark.django_db


def test_cas_setting_has_no_temperature_and_it_never_makes_a_version():
    setting = services.create_judge_setting(name="cas", kind=JudgeSetting.Kind.CAS_FINAL_ANSWER, temperature=0.7)
    setting.refresh_from_db()
    assert setting.temperature is None
    assert selectors.setting_summary(setting)["temperature"] is None
    make_results(setting, make_responses(make_question(), 1), [5])  # used: a change would make version 2
    same = services.update_judge_setting(setting, temperature=0.7, notes="")
    assert same.pk == setting.pk and JudgeSetting.objects.filter(name="cas").count() == 1
    changed = services.update_judge_setting(setting, temperature=0.3, notes="now with notes")
    assert changed.version == 2 and changed.temperature is None


def test_the_setting_form_says_the_temperature_is_ignored(admin_client_):
    from django.urls import reverse
    page = admin_client_.get(reverse("grading:judge_setting_create")).content.decode()
    assert "Ignored, and saved empty, for kinds that call no LLM" in page
