"""The style-ablation page (studies.views.style_home, /grading/studies/style/) with the paper's released
style-transferred file (issue 34): it imports as released, lists each flagged rewrite with why (final answers,
lines not found), offers the second analysis with flagged cases, in English and in Chinese."""
import shutil

import pytest

from annotation.importers import import_realmath
from studies import style
from studies.models import ProbeRun
from tests.conftest import ROOT
from tests.factories import make_setting
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db

FULL = ROOT / "fixtures" / "realmath_eval_full"
STYLE = "realmath_eval_gemini3pro_hard_cases_ge2_style_transferred_72.json"


@pytest.fixture
def imported(reviewer_client, tmp_path):
    path = tmp_path / "realmath_eval.json"
    shutil.copyfile(FULL / "realmath_eval.json", path)
    with path.open("rb") as stream:
        import_realmath(stream, path.name)
    shutil.copyfile(FULL / STYLE, tmp_path / STYLE)
    with (tmp_path / STYLE).open("rb") as upload:
        return reviewer_client.post("/grading/studies/style/", {"action": "import", "file": upload}, follow=True)


def test_page_imports_the_released_file_and_lists_why_each_rewrite_is_flagged(reviewer_client, imported):
    page = imported.content.decode()
    n_flagged = style.rewrite_counts()["flagged"]
    assert f"Rewrites from {STYLE}: 72 made, 0 kept, {n_flagged} flagged, 0 unmatched records." in page
    assert f"72 rewrites of current texts (0 by an LLM, 72 from files): {72 - n_flagged} usable, {n_flagged} flagged." in page
    assert 'id="flagged-table"' in page and page.count('data-reason="') >= n_flagged
    row = page[page.index('data-record="42"'):]
    row = row[:row.index("</tr>")]
    assert 'data-reason="lines_dropped"' in row and "20 → 17" in row
    assert "Hence $C&lt;\\pi/3$, a contradiction. Therefore $B$ is obtuse." in row
    merged = page[page.index('data-record="27"'):]
    assert "none: lines were merged" in merged[:merged.index("</tr>")]
    assert 'name="include_flagged"' in page and "Also judge the flagged rewrites, in a second analysis" in page


def test_page_in_chinese(reviewer_client, imported):
    reviewer_client.cookies["django_language"] = "zh-hans"
    page = reviewer_client.get("/grading/studies/style/").content.decode()
    assert "逐例列出被标记的改写" in page and "原作答中在改写里找不到的行" in page and "无：行被合并" in page
    assert "按记号相同" in page  # how the final answers were compared, translated


def test_starting_with_the_flagged_cases_records_the_choice(reviewer_client, imported, endpoint, llm_server):
    llm_server.default = Reply("Overall Score: 5")
    setting = make_setting(endpoint, name="style-flagged")
    started = reviewer_client.post("/grading/studies/style/", {"action": "run", "setting": setting.pk,
                                                               "include_flagged": "on"})
    run = ProbeRun.objects.get()
    assert started["Location"].endswith(f"/{run.pk}/") and run.selection["style_include_flagged"] is True
    assert run.n_items == 72 and run.skipped[f"{style.PROBE} (flagged)"] == 0
