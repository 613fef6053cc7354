"""The methods report follows the person's language: headings, prose and table headers in Chinese
for a zh-hans reader (page and downloads), the same figures, and the JSON appendix unchanged."""
import json

import pytest
from django.urls import reverse
from django.utils import translation

from .helpers import untraced_figures

pytestmark = pytest.mark.django_db
URL = reverse("grading:methods_report")


@pytest.fixture(autouse=True)
def _language_left_as_found():
    """A request's language stays active in the test's thread after it: put the default back."""
    yield
    translation.deactivate()


def _keys(value):
    """The appendix's shape: its keys at every level, and its figures (the category names, shown
    to people, follow the language)."""
    if isinstance(value, dict):
        return {key: ("name" if key == "name" else _keys(item)) for key, item in value.items()}
    if isinstance(value, list):
        return [_keys(item) for item in value]
    return value


def test_a_chinese_reader_gets_the_report_in_chinese_with_the_same_figures(reviewer_client, judged):
    params = {"setting": judged.pk}
    english = reviewer_client.get(URL, {"download": "markdown", **params}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    chinese = reviewer_client.get(URL, {"download": "markdown", **params},
                                  HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "## Methods" in english and "## Expert agreement" in english
    assert "# 方法报告" in chinese and "## 方法" in chinese and "## 专家评分一致性" in chinese  # the glossary: no redundant 专家间 (issue 39)
    for english_only in ("## Methods", "The dataset holds", "Exact agreement", "| Setting |"):
        assert english_only not in chinese
    data = json.loads(reviewer_client.get(URL, {"download": "json", **params}, HTTP_ACCEPT_LANGUAGE="zh-hans").content)
    assert _keys(data) == _keys(json.loads(reviewer_client.get(URL, {"download": "json", **params},
                                                               HTTP_ACCEPT_LANGUAGE="en").content))
    assert untraced_figures(chinese, data) == []

    latex = reviewer_client.get(URL, {"download": "latex", **params}, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "\\section*{方法}" in latex and "ctex" in latex.splitlines()[0]

    page = reviewer_client.get(URL, params, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "评判模型与金标准分对比" in page and "Judge versus gold" not in page


def test_the_study_sections_and_run_pickers_in_chinese(reviewer_client, judged):
    chinese = reviewer_client.get(URL, {"download": "markdown"}, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    for line in ("## 风格消融", "风格消融：未运行。", "## OCR 与评判归因", "OCR 归因：未运行。", "## 锚定实验", "锚定实验：未运行。",
                 "## 评分细则重新评判", "评分细则重新评判：未运行。", "错误几何：未运行（没有已分析的运行）。"):
        assert line in chinese
    for english in ("not run", "Style ablation", "Scanned answers are judged", "Error segments are"):
        assert english not in chinese
    page = reviewer_client.get(URL, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "错误几何运行" in page and "步骤惊异度运行" in page and "最新的已分析运行" in page
    assert "Error-geometry run" not in page and "newest analysed" not in page
