"""Who may import what (issue 29, items 1 and 3): a reviewer's import of a full JSONL export
creates no judge endpoint (they say where the server's keys are sent), creates no user and
changes no role; an admin's import and the command line may."""
import json

import pytest
from django.contrib.auth import get_user_model

from accounts.roles import user_role
from annotation.export.load import import_dataset
from annotation.importers import ImportFormatError
from grading.models import JudgeSetting, LlmEndpoint

from ..conftest import make_user
from .test_import_validation import _counts, _file, good_lines

pytestmark = pytest.mark.django_db

HOSTILE = {"type": "judge_endpoint", "name": "mine", "base_url": "http://127.0.0.1:8899/v1",
           "api_key_env": "OPENAI_API_KEY"}
SETTING = {"type": "judge_config", "name": "steal", "version": 1, "endpoint": "mine", "kind": "rubric", "model": "m"}


def _lines(*lines):
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_a_reviewers_import_creates_no_endpoint():
    reviewer = make_user("rev", "reviewer")
    before = _counts()
    with pytest.raises(ImportFormatError, match=r"^line 1, field name: the file defines a judge endpoint 'mine'; "
                                                r"only an admin may create endpoints"):
        import_dataset(_lines(HOSTILE, SETTING), "dataset.jsonl", user=reviewer)
    assert _counts() == before and not LlmEndpoint.objects.exists()


def test_a_reviewer_may_name_an_endpoint_only_as_it_is_here():
    reviewer = make_user("rev", "reviewer")
    LlmEndpoint.objects.create(name="mine", base_url="http://llm.example.org/v1", api_key_env="OPENAI_API_KEY")
    with pytest.raises(ImportFormatError, match=r"^line 1, field base_url: differs from the endpoint 'mine' here"):
        import_dataset(_lines(HOSTILE, SETTING), "dataset.jsonl", user=reviewer)
    same = {**HOSTILE, "base_url": "http://llm.example.org/v1"}
    import_dataset(_lines(same, SETTING), "dataset.jsonl", user=reviewer)
    endpoint = LlmEndpoint.objects.get()
    assert endpoint.base_url == "http://llm.example.org/v1" and JudgeSetting.objects.get().endpoint == endpoint


@pytest.mark.parametrize("importer", ["admin", None])
def test_an_admins_import_and_the_command_line_create_endpoints(importer):
    user = make_user("boss", "admin") if importer else None
    import_dataset(_lines(HOSTILE, SETTING), "dataset.jsonl", user=user)
    assert LlmEndpoint.objects.get().base_url == HOSTILE["base_url"]


def test_a_reviewers_import_changes_no_role():
    reviewer = make_user("rev", "reviewer")
    nobody = get_user_model().objects.create_user("nobody")
    import_dataset(_lines({"type": "user", "username": "nobody", "role": "reviewer"}), "dataset.jsonl", user=reviewer)
    assert user_role(get_user_model().objects.get(pk=nobody.pk)) is None


def test_a_reviewers_import_creates_no_user():
    reviewer = make_user("rev", "reviewer")
    before = _counts()
    with pytest.raises(ImportFormatError, match=r"^line 1, field username: user 'newcomer' does not exist here"):
        import_dataset(_lines({"type": "user", "username": "newcomer", "role": "annotator"}), "dataset.jsonl",
                       user=reviewer)
    LlmEndpoint.objects.create(name="local", base_url="http://127.0.0.1:9/v1", api_key_env="OPENAI_API_KEY")
    lines = good_lines()
    lines[-1]["annotations"][0]["annotator"] = "ghost"
    with pytest.raises(ImportFormatError, match=r"^line 1, field username: user 'ann' does not exist here"):
        import_dataset(_file(lines), "dataset.jsonl", user=reviewer)
    lines = [line for line in lines if line["type"] != "user"]  # named only inside a response line
    before = _counts()
    with pytest.raises(ImportFormatError, match=r"^line 5, field annotations\[0\].annotator: user 'ghost' does not"):
        import_dataset(_file(lines), "dataset.jsonl", user=reviewer)
    assert _counts() == before


def test_an_admins_import_creates_users_and_restores_roles():
    admin = make_user("boss", "admin")
    import_dataset(_lines({"type": "user", "username": "newcomer", "role": "reviewer"}), "dataset.jsonl", user=admin)
    newcomer = get_user_model().objects.get(username="newcomer")
    assert user_role(newcomer) == "reviewer" and not newcomer.has_usable_password()

