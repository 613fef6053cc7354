"""The prompt-set page (grading.judges.views.prompt_sets, /grading/judges/prompt-sets/) with the paper's few-shot
file and its manifest, as released (issue 34): 28 hold-outs by source index, said in English and in Chinese."""
import shutil

import pytest

from annotation.importers import import_realmath
from grading.models import PromptSet
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db

FULL = ROOT / "fixtures" / "realmath_eval_full"


@pytest.fixture
def human_release(tmp_path):
    path = tmp_path / "realmath_eval.json"
    shutil.copyfile(FULL / "realmath_eval.json", path)
    with path.open("rb") as stream:
        import_realmath(stream, path.name)


def _post(client, tmp_path, name, **extra):
    files = {}
    for field, file_name in {"file": "realmath_eval_fewshot.json", "manifest": "realmath_eval_fewshot_manifest.json",
                             **extra}.items():
        shutil.copyfile(FULL / "realmath_eval.json" if file_name == "source" else FULL / file_name,
                        tmp_path / f"{field}.json")
        files[field] = (tmp_path / f"{field}.json").open("rb")
    try:
        return client.post("/grading/judges/prompt-sets/", {"name": name, **files}, follow=True)
    finally:
        for handle in files.values():
            handle.close()


def test_page_imports_the_released_few_shot_file_with_its_manifest(reviewer_client, human_release, tmp_path):
    page = _post(reviewer_client, tmp_path, "fewshot").content.decode()
    assert "Prompt set fewshot: 196 prompts attached to existing answers, 0 records unmatched, 28 hold-out answers" in page
    assert "Hold-outs: the manifest's 28 source indices in realmath_eval.json." in page
    assert PromptSet.objects.get(name="fewshot").entries.filter(holdout=True).count() == 28
    form = reviewer_client.get("/grading/judges/prompt-sets/").content.decode()
    assert 'name="manifest_source"' in form and "The manifest&#x27;s source file (optional)" in form


def test_page_in_chinese_and_a_source_file_without_a_manifest_is_refused(reviewer_client, human_release, tmp_path):
    reviewer_client.cookies["django_language"] = "zh-hans"
    page = _post(reviewer_client, tmp_path, "fewshot").content.decode()
    assert "清单在 realmath_eval.json 中的 28 个源索引。" in page and "清单的源文件（可选）" in page
    shutil.copyfile(FULL / "realmath_eval_fewshot.json", tmp_path / "f.json")
    shutil.copyfile(FULL / "realmath_eval.json", tmp_path / "s.json")
    with (tmp_path / "f.json").open("rb") as upload, (tmp_path / "s.json").open("rb") as source:
        page = reviewer_client.post("/grading/judges/prompt-sets/",
                                    {"name": "other", "file": upload, "manifest_source": source}).content.decode()
    assert "源文件须与留出样本清单一起提供。" in page
    assert not PromptSet.objects.filter(name="other").exists()
