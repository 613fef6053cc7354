"""The geometry page in a real browser: start a lexical study from a segments file through the
menu, land on its run page, and find the table, the Chart.js figures and the heatmaps drawn, each
labelled as the lexical baseline, with no error in the console (CSP included)."""
import json
import re

import pytest

from studies.geometry.models import GeometryRun
from tests.conftest import login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_start_a_lexical_study_and_see_its_figures(page, live_server, reviewer, tmp_path):
    path = tmp_path / "segments.jsonl"
    path.write_text("\n".join(json.dumps({
        "segment_text": f"{s} answer {i}: f(x) = {i}x + {i * i}, therefore the slope is {i}", "sample_id": f"{s}{i}",
        "question": f"Q{i % 4}", "sub_id": "(1)", "real_score": 1, "max_score": 3, "analysis_subset": s})
        for s in ("human", "synthetic") for i in range(12)))
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    login(page, live_server, reviewer.username)
    page.hover(".menu-group[data-group=review]")
    page.click(".menu-group[data-group=review] >> text=Error geometry and step surprisal")
    page.wait_for_selector("#geometry-form")
    assert page.is_checked("#geometry-sources input[value=human]") and not page.is_checked("#geometry-sources input[value=probe-derived]")
    screenshot(page, "studies_geometry_home")
    page.set_input_files("#geometry-form input[name=segments_file]", str(path))
    page.uncheck("#geometry-form input[name=cluster]")
    page.fill("#geometry-form input[name=bootstrap]", "50")
    page.click("#start-geometry")
    page.wait_for_url(re.compile(r"/grading/studies/geometry/runs/\d+/$"))
    run = GeometryRun.objects.get()
    page.wait_for_selector("#geometry-table tr[data-group=synthetic]")
    assert run.analysis_state == "done"
    assert page.locator("#geometry-table tr[data-group=human] td").nth(1).inner_text() == "12"
    assert page.locator("#fig-silhouette").count() == 0  # no clusters asked: no silhouette or BIC figure
    drawn = page.evaluate("""() => ['fig-density', 'fig-variance'].map(
        id => { const c = window.Chart.getChart(document.getElementById(id)); return c ? c.options.plugins.title.text : null; })""")
    assert all(title and title.endswith("(lexical baseline, not semantic)") for title in drawn), drawn
    assert page.evaluate("() => Array.from(document.querySelectorAll('canvas.heatmap')).map(c => c.width)") == [12, 12]
    assert "lexical baseline, not semantic" in page.inner_text("#geometry-results figcaption >> nth=-1")
    screenshot(page, "studies_geometry_run")
    # Both pages fit a window 800 px wide (wide tables scroll inside their card).
    page.set_viewport_size({"width": 800, "height": 900})
    for url in (page.url, f"{live_server.url}/grading/studies/geometry/"):
        page.goto(url)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 800, url
    assert not errors, errors
