"""The methods report's error-geometry and step-surprisal section: "not run" until a study is
analysed, then every figure printed is a value of the appendix; the run reported can be chosen."""
import json

import pytest

from grading.report import document, selectors
from studies import report_section as studies_report
from studies.geometry import services

pytestmark = pytest.mark.django_db


def test_section_appears_once_a_geometry_run_is_analysed():
    data = selectors.report_data(bootstrap=0)
    assert data["geometry"] == {"geometry": None, "surprisal": None,
                                "chosen": {"geometry": False, "surprisal": False}}
    blocks = studies_report.geometry_section(data).blocks
    assert "Error geometry: not run (no analysed run)." in blocks and "Step surprisal: not run (no analysed run)." in blocks
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
    test = figures["human_vs_synthetic"]["dispersion"]
    assert test["p_text"] == document.p_value(test["p"], test["resolution"]) and f"p = {test['p_text']})" in text
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
            f"(permutation test, p = {test['p_text']})") in text


def _analysed_run(tag):
    lines = [json.dumps({"segment_text": f"{tag} {s} answer {i}, so y = {i * 3}", "sample_id": f"{tag}{s}{i}",
                         "question": f"Q{i % 3}", "sub_id": "(1)", "real_score": 1, "max_score": 3, "analysis_subset": s})
             for s in ("human", "synthetic") for i in range(8)]
    return services.run_inline(services.start_run(segments=services.parse_segments_jsonl("\n".join(lines)), bootstrap=0,
                                                  permutations=10, cluster=False, enqueue=False))


def test_the_geometry_run_is_chosen_on_the_page_and_in_the_command(reviewer_client, tmp_path):
    from django.core.management import CommandError, call_command
    from django.urls import reverse

    older, newer = _analysed_run("older"), _analysed_run("newer")
    assert selectors.report_data(bootstrap=0)["geometry"]["geometry"]["run"] == newer.pk  # default: the newest
    assert [row["id"] for row in studies_report.geometry_runs("geometry")] == [newer.pk, older.pk]

    url = reverse("grading:methods_report")
    page = reviewer_client.get(url, {"geometry": older.pk}).content.decode()
    assert f"Error geometry: run {older.pk}, chosen for this report." in page
    assert f'<option value="{older.pk}" selected>' in page and f'href="?geometry={older.pk}&amp;download=json"' in page
    appendix = reviewer_client.get(url, {"geometry": older.pk, "download": "json"}).json()
    assert appendix["geometry"]["geometry"]["run"] == older.pk and appendix["geometry"]["chosen"]["geometry"] is True
    assert f"Error geometry: run {newer.pk}, the newest analysed run." in reviewer_client.get(url).content.decode()
    for bad in ("999999", "abc"):
        assert reviewer_client.get(url, {"geometry": bad}).status_code == 404
    assert reviewer_client.get(url, {"surprisal": older.pk}).status_code == 404  # a geometry run is no surprisal run

    out = tmp_path / "report.md"
    call_command("methods_report", "--bootstrap", "0", "--geometry-run", str(older.pk), "--output", str(out),
                 stdout=open(tmp_path / "stdout", "w"))
    assert f"Error geometry: run {older.pk}, chosen for this report." in out.read_text()
    with pytest.raises(CommandError, match=rf"--geometry-run 999999: no analysed geometry run .*{newer.pk}, {older.pk}"):
        call_command("methods_report", "--geometry-run", "999999")
