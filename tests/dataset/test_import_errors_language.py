"""An import's refusal is written in the language of the person importing: at once in the request's
language, and for a job run by a worker in the language its uploader chose (else the server's)."""
import json

import pytest
from django.utils import translation

from accounts.models import Preference
from annotation.importers import ImportFormatError
from annotation.importers import services as jobs
from annotation.importers.common import load_json_array
from annotation.models import ImportJob
from tests.conftest import REALMATH_HUMAN

pytestmark = pytest.mark.django_db


def _bad_records():
    records = json.loads(REALMATH_HUMAN.read_text())[:2]
    records[1]["full_score"] = "many"
    return json.dumps(records).encode()


@pytest.mark.parametrize(("language", "expected"), [
    ("en", "f.json: the array holds no records."),
    ("zh-hans", "f.json：数组中没有任何记录。"),
])
def test_a_refusal_follows_the_active_language(language, expected):
    with translation.override(language), pytest.raises(ImportFormatError) as refused:
        load_json_array(b"[]", "f.json")
    assert str(refused.value) == expected


def test_a_field_refusal_in_chinese_names_record_and_field():
    with translation.override("zh-hans"), pytest.raises(ImportFormatError) as refused:
        load_json_array(b'[{"a": "x\\u0000"}]', "f.json")
    assert str(refused.value) == "第 0 条记录：字段 'a' 含有 NUL 字符（\\u0000），数据库无法存储。"


@pytest.fixture
def import_root(settings, tmp_path):
    settings.IMPORT_ROOT = tmp_path / "imports"
    settings.IMPORT_ROOT.mkdir()
    return settings.IMPORT_ROOT


def _failed_job(import_root, user):
    data = _bad_records()
    (import_root / "f.upload").write_bytes(data)
    job = ImportJob.objects.create(format="realmath", file_name="f.json", stored_name="f.upload",
                                   file_size=len(data), created_by=user)
    jobs.run_import_job(job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED
    return job.error


def test_a_jobs_refusal_is_in_the_language_its_uploader_chose(admin_user, import_root):
    Preference.objects.create(user=admin_user, language="zh-hans")
    error = _failed_job(import_root, admin_user)
    assert error.startswith("未导入任何内容。第 1 条记录：字段 'full_score' 必须是数字，实际为 str"), error


def test_without_a_choice_a_jobs_refusal_is_in_the_servers_language(admin_user, import_root, settings):
    settings.LANGUAGE_CODE = "en"
    error = _failed_job(import_root, admin_user)
    assert error.startswith("Nothing was imported. record 1: field 'full_score'"), error
    settings.LANGUAGE_CODE = "zh-hans"
    (import_root / "f.upload").unlink(missing_ok=True)
    assert _failed_job(import_root, admin_user).startswith("未导入任何内容。")


def test_a_full_exports_refusal_in_chinese_names_line_and_field():
    import io

    from annotation.export.load import check_lines

    with translation.override("zh-hans"), pytest.raises(ImportFormatError) as refused:
        check_lines(io.BytesIO(b'{"type": "nope"}\n'), "d.jsonl")
    assert str(refused.value).startswith("第 1 行："), str(refused.value)
    assert "line" not in str(refused.value)
