"""The methods report's error-geometry and step-surprisal section: absent until a study is
analysed, then every figure printed is a value of the appendix."""
import json

import pytest

from grading.report import document, selectors
from grading.studies.geometry import services

pytestmark = pytest.mark.django_db


def test_section_appears_once_a_geometry_run_is_analysed():
    data = selectors.report_data(bootstrap=0)
    assert data["geometry"] == {"geometry": None, "surprisal": None}
    assert document.geometry_section(data) is None
    lines = [json.dumps({"segment_text": f"{s} answer {i}, therefore x = {i * 7}", "sample_id": f"{s}{i}",
                         "question": f"Q{i % 3}", "sub_id": "(1)", "real_score": 1, "max_score": 3, "analysis_subset": s})
             for s in ("human", "synthetic") for i in range(9)]
    run = services.run_inline(services.start_run(segments=services.parse_segments_jsonl("\n".join(lines)), bootstrap=30,
                                                 permutations=30, cluster=False, enqueue=False))
    data = selectors.report_data(bootstrap=0)
    figures = data["geometry"]["geometry"]
    assert figures["run"] == run.pk and figures["label"] == "lexical baseline, not semantic"
    text = document.build(data, "markdown")
    assert "## Error geometry and step surprisal" in text and "lexical baseline, not semantic" in text
    human = figures["groups"]["human"]
    assert document.with_interval(human["dispersion"], human["dispersion_ci"]) in text
    assert document.number(figures["human_vs_synthetic"]["dispersion"]["p"]) in text
    assert "\\section*{Error geometry and step surprisal}" in document.build(data, "latex")


def test_probe_derived_group_and_its_test_in_the_report():
    lines = [json.dumps({"segment_text": f"{s} answer {i}, therefore x = {i * 7}", "sample_id": f"{s}{i}",
                         "question": f"Q{i % 3}", "sub_id": "(1)", "real_score": None, "max_score": 3, "analysis_subset": s})
             for s in ("human", "probe-derived") for i in range(9)]
    services.run_inline(services.start_run(segments=services.parse_segments_jsonl("\n".join(lines)), bootstrap=0,
                                           permutations=30, cluster=False, enqueue=False))
    data = selectors.report_data(bootstrap=0)
    figures = data["geometry"]["geometry"]
    assert set(figures["groups"]) == {"human", "probe-derived"} and figures["human_vs_synthetic"] is None
    test = figures["human_vs_probe_derived"]["dispersion"]
    text = document.build(data, "markdown")
    assert "| probe-derived |" in text
    assert (f"Dispersion, human minus probe-derived: {document.number(test['difference'])} "
            f"(permutation test, p = {document.number(test['p'])})") in text
