"""Issue 36: the `error_geometry` command and the methods report print the permutation p at its
resolution (never "0.000"), the command's table flags a GMM best k at the edge of its sweep, and
the definitions written into every run's JSON name the intervals and the sweep as they are made."""
import json
from io import StringIO

import pytest
from django.core.management import call_command

from grading.report import document, selectors
from studies.geometry import services
from studies.management.commands.error_geometry import table

pytestmark = pytest.mark.django_db

PERMUTATIONS = 2000


def _segments_file(tmp_path):
    """Human segments all alike, synthetic ones all different, over 6 questions: no shuffle of the
    labels is as extreme as the observed dispersion difference, so p = 1 / (1 + N)."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"]
    lines = []
    for i in range(12):
        lines.append({"segment_text": "so x = 2 and therefore x squared is 4", "sample_id": f"h{i}", "question": f"Q{i % 6}",
                      "sub_id": "(1)", "real_score": 1, "max_score": 3, "analysis_subset": "human"})
        text = " ".join(words[(i * k) % 12] * (k + 1) for k in range(1, 4)) + f" {i * 97} qzv{i}"
        lines.append({"segment_text": text, "sample_id": f"s{i}", "question": f"Q{i % 6}", "sub_id": "(1)",
                      "real_score": 1, "max_score": 3, "analysis_subset": "synthetic"})
    path = tmp_path / "segments.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    return path


def test_the_smallest_permutation_p_is_printed_with_its_resolution(tmp_path):
    out = StringIO()
    call_command("error_geometry", "--lexical", "--no-clusters", "--inline", "--bootstrap", "0", "--permutations",
                 str(PERMUTATIONS), "--segments-in", str(_segments_file(tmp_path)), stdout=out, stderr=StringIO())
    text = out.getvalue()
    test = services.GeometryRun.objects.get().results["human_vs_synthetic"]["dispersion"]
    assert test["p"] == pytest.approx(1 / (1 + PERMUTATIONS))  # as extreme as it gets
    assert "permutation p = < 0.0005" in text and "p = 0.000" not in text

    data = selectors.report_data(bootstrap=0)
    markdown = document.build(data, "markdown")
    assert "(permutation test, p = < 0.0005)" in markdown and "p = 0.000" not in markdown
    assert data["geometry"]["geometry"]["human_vs_synthetic"]["dispersion"]["p_text"] == "< 0.0005"


def _results(at_edge):
    group = {"n": 35, "dispersion": 0.4, "dispersion_ci": [0.3, 0.5], "total_variance": 0.7, "top10_share": 0.5,
             "clusters": 2, "noise_share": 0.1, "silhouette": 0.2, "gmm": {"best_k": 3, "max_k": 3, "at_edge": at_edge}}
    return {"label": "lexical baseline, not semantic", "groups": {"human": group}}


class _Out(list):
    def write(self, line):
        self.append(line)


def test_the_command_table_flags_a_best_k_at_the_edge_of_the_sweep():
    lines = _Out()
    table(_results(True), lines)
    row = next(line for line in lines if line.startswith("human"))
    assert row.rstrip().endswith("3*")
    assert "* GMM best k at the edge of its sweep (the largest k tried): the BIC found no minimum" in lines
    lines = _Out()
    table(_results(False), lines)
    assert next(line for line in lines if line.startswith("human")).rstrip().endswith(" 3")
    assert not any("edge" in line for line in lines)


def test_the_definitions_name_the_jackknife_the_minimum_and_the_capped_sweep():
    geometry, surprisal = services.DEFINITIONS_GEOMETRY, services.DEFINITIONS_SURPRISAL
    assert "delete-one-question jackknife" in geometry["ci"] and "total variance and top-10 share" in geometry["ci"]
    assert "dispersion by a percentile cluster bootstrap" in geometry["ci"]
    assert "none from fewer than 5 questions" in geometry["ci"] and "none from fewer than 5 questions" in surprisal["ci"]
    assert "surprisal and LL" in surprisal["ci"]
    assert "k = 2..min(30, n // 10)" in geometry["gmm"] and "at_edge" in geometry["gmm"]
