"""Issue 34 in a real browser, in English and in Chinese: the paper's files as released go in through their
pages: the few-shot file with its manifest (28 hold-outs), the 72 style-transferred rewrites (each flagged case
with why), the error-segment bundle's two files in one upload (606 segments found, a limit of 40 kept)."""
import re
import shutil

import pytest

from accounts.services import set_user_language
from annotation.importers import import_realmath
from grading.models import PromptSet
from studies.geometry.models import GeometryRun
from tests.conftest import ROOT, login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FULL = ROOT / "fixtures" / "realmath_eval_full"
STYLE = "realmath_eval_gemini3pro_hard_cases_ge2_style_transferred_72.json"


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_paper_files_go_in_through_their_pages(page, live_server, reviewer, tmp_path, language):
    set_user_language(reviewer, language)
    for name in ("realmath_eval.json", "realmath_eval_fewshot.json", "realmath_eval_fewshot_manifest.json", STYLE):
        shutil.copyfile(FULL / name, tmp_path / name)
    for name in ("human_error_segments.jsonl", "llm_error_segments.jsonl"):
        shutil.copyfile(FULL / "error_segment_bundle" / name, tmp_path / name)
    with (tmp_path / "realmath_eval.json").open("rb") as stream:
        import_realmath(stream, "realmath_eval.json")
    login(page, live_server, reviewer.username)

    page.goto(f"{live_server.url}/grading/judges/prompt-sets/")
    page.fill("#prompt-set-form input[name=name]", "fewshot")
    page.set_input_files("#prompt-set-form input[name=file]", str(tmp_path / "realmath_eval_fewshot.json"))
    page.set_input_files("#prompt-set-form input[name=manifest]", str(tmp_path / "realmath_eval_fewshot_manifest.json"))
    page.click("#prompt-set-form button[type=submit]")
    page.wait_for_selector("#set-fewshot .holdout-rule")
    rule = page.inner_text("#set-fewshot .holdout-rule")
    assert ("28 source indices in realmath_eval.json" if language == "en" else "28 个源索引") in rule
    assert PromptSet.objects.get(name="fewshot").entries.filter(holdout=True).count() == 28
    screenshot(page, f"paper_fewshot_prompt_set_{language}")

    page.goto(f"{live_server.url}/grading/studies/style/")
    page.set_input_files("#style-import-form input[name=file]", str(tmp_path / STYLE))
    page.click("#style-import-form button[type=submit]")
    page.wait_for_selector("#flagged-table")
    row = page.locator('#flagged-table tr[data-record="42"]')
    assert "Hence $C<\\pi/3$, a contradiction. Therefore $B$ is obtuse." in row.inner_text()
    merged = page.locator('#flagged-table tr[data-record="27"] .missing').inner_text()
    assert merged == ("none: lines were merged" if language == "en" else "无：行被合并")
    assert page.locator("#style-run-form input[name=include_flagged]").count() == 1
    screenshot(page, f"paper_style_flagged_{language}")

    page.goto(f"{live_server.url}/grading/studies/geometry/")
    page.set_input_files("#geometry-form input[name=segments_file]",
                         [str(tmp_path / "human_error_segments.jsonl"), str(tmp_path / "llm_error_segments.jsonl")])
    page.fill("#geometry-form input[name=bootstrap]", "0")
    page.fill("#geometry-form input[name=limit]", "40")  # the analysis runs in the request here: keep it short
    page.uncheck("#geometry-form input[name=cluster]")
    with page.expect_navigation(url=re.compile(r"/grading/studies/geometry/runs/\d+/$"), timeout=180_000):
        page.click("#geometry-form button[type=submit]")
    run = GeometryRun.objects.get()
    assert run.selection["segments_found"] == 606 and run.n_items == 40
    assert {"human", "synthetic"} == set(run.items.values_list("subset", flat=True))
    screenshot(page, f"paper_bundle_run_{language}")
