"""The methods report page (grading.report.views.methods_report, /grading/report/): reviewers and admins only; formats; downloads."""
import json

import pytest
from django.test import Client
from django.urls import reverse

from .helpers import untraced_figures

pytestmark = pytest.mark.django_db
URL = reverse("grading:methods_report")


def test_roles(annotator, reviewer, admin_user, judged):
    def client_for(user=None):
        client = Client()
        if user is not None:
            client.force_login(user)
        return client

    anonymous = client_for().get(URL)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert client_for(annotator).get(URL).status_code == 403
    assert client_for(annotator).get(URL, {"download": "json"}).status_code == 403
    assert client_for(reviewer).get(URL).status_code == 200
    assert client_for(admin_user).get(URL).status_code == 200


def test_page_shows_the_report_formatted_and_escapes_names(reviewer_client, judged):
    """By default the report is shown as a page (headings, paragraphs, tables), not as Markdown source."""
    html = reviewer_client.get(URL).content.decode()
    assert 'id="report-formatted"' in html and 'id="report-text"' not in html
    assert "<h3>Judge versus gold</h3>" in html and "## " not in html
    assert "<caption>All answers, with 95% intervals</caption>" in html
    assert "<th>MSE</th>" in html and "<td>page-judge v1</td>" in html
    assert "<td>Page exam &lt;b&gt;x&lt;/b&gt;</td>" in html and "<b>x</b>" not in html
    assert 'href="?download=json"' in html and 'href="?download=latex"' in html
    assert "methods_report --format markdown" in html


def test_page_shows_the_markdown_text(reviewer_client, judged):
    html = reviewer_client.get(URL, {"format": "markdown"}).content.decode()
    assert 'id="report-text"' in html and 'data-format="markdown"' in html
    assert "## Judge versus gold" in html and "page-judge" in html
    assert "Page exam &lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    latex = reviewer_client.get(URL, {"format": "latex", "setting": judged.pk}).content.decode()
    assert "\\section*{Methods}" in latex and 'data-format="latex"' in latex
    assert f'href="?setting={judged.pk}&amp;download=markdown"' in latex


def test_downloads(reviewer_client, judged):
    appendix = reviewer_client.get(URL, {"download": "json", "setting": judged.pk})
    assert appendix["Content-Type"].startswith("application/json")
    assert 'attachment; filename="methods-report.json"' == appendix["Content-Disposition"]
    data = json.loads(appendix.content)
    assert data["setting"] == "page-judge" and data["judges"][0]["overall"]["n"] == 5
    markdown = reviewer_client.get(URL, {"download": "markdown", "setting": judged.pk})
    assert markdown["Content-Disposition"].endswith('methods-report.md"')
    assert untraced_figures(markdown.content.decode(), data) == []
    latex = reviewer_client.get(URL, {"download": "latex", "setting": judged.pk})
    assert latex["Content-Disposition"].endswith('methods-report.tex"') and b"\\begin{tabular}" in latex.content


def test_bad_parameters(reviewer_client, judged):
    assert reviewer_client.get(URL, {"setting": "999999"}).status_code == 404
    assert reviewer_client.get(URL, {"setting": "abc"}).status_code == 404
    assert reviewer_client.get(URL, {"download": "exe"}).status_code == 404
    unknown = reviewer_client.get(URL, {"format": "html"})  # unknown format: the formatted page
    assert unknown.status_code == 200 and 'id="report-formatted"' in unknown.content.decode()
