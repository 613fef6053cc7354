"""The methods report page (reviewers and admins): the report formatted (headings, paragraphs and
tables), or its Markdown or LaTeX text, with downloads of the text and of its JSON appendix.
Figures are read by grading.report.selectors and formatted by grading.report.document, like the
methods_report command."""
from urllib.parse import urlencode

from django.http import Http404, HttpResponse
from django.shortcuts import render

from accounts.decorators import reviewer_required
from core.ids import id_param

from ..judges import selectors as judge_selectors
from ..review import selectors as review
from . import document
from . import selectors as report

DOWNLOADS = {
    "markdown": ("methods-report.md", "text/markdown; charset=utf-8"),
    "latex": ("methods-report.tex", "application/x-tex; charset=utf-8"),
    "json": ("methods-report.json", "application/json; charset=utf-8"),
}
VIEWS = ("formatted", *document.FORMATS)  # how the page shows the report


def _setting(params):
    raw = params.get("setting")
    if not raw:
        return None
    setting = judge_selectors.setting_by_id(id_param(raw))
    if setting is None:
        raise Http404("No such judge setting version.")
    return setting


def _choices(params):
    """{name: the run chosen} for each choice of the later apps' parts given in `params`
    (report.report_choices: the error-geometry and step-surprisal runs); 404 for an id that is no
    run of that choice."""
    chosen = {}
    for name, module in report.report_choices().items():
        raw = params.get(name)
        if not raw:
            continue
        chosen[name] = module.chosen(name, id_param(raw))
        if chosen[name] is None:
            raise Http404("No such analysed study run.")
    return chosen


def _query(setting, choices):
    """The querystring that selects the report again (the downloads' links)."""
    pairs = [("setting", setting), *choices.items()]
    return urlencode([(name, value.pk) for name, value in pairs if value is not None])


def _pickers(choices):
    """The run pickers of the page: name, label, options ({id, label}) and the run chosen."""
    return [{"name": name, "label": module.CHOICES[name]["label"], "options": module.choice_options(name),
             "selected": choices.get(name)} for name, module in report.report_choices().items()]


@reviewer_required
def methods_report(request):
    setting = _setting(request.GET)
    choices = _choices(request.GET)
    fmt = request.GET.get("format") if request.GET.get("format") in VIEWS else "formatted"
    download = request.GET.get("download")
    if download and download not in DOWNLOADS:
        raise Http404("Unknown download.")
    data = report.report_data(setting, choices=choices)
    if download:
        body = document.appendix_json(data) if download == "json" else document.build(data, download)
        filename, content_type = DOWNLOADS[download]
        response = HttpResponse(body, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
    if fmt == "formatted":
        shown = {"sections": [(section.title, [(isinstance(block, document.Table), block) for block in section.blocks])
                              for section in document.build_sections(data)]}
    else:
        shown = {"text": document.build(data, fmt)}
    return render(request, "grading/report/methods_report.html", {
        **shown,
        "format": fmt,
        "formats": VIEWS,
        "text_format": "latex" if fmt == "latex" else "markdown",
        "setting": setting,
        "settings_list": review.settings_with_results(),
        "pickers": _pickers(choices),
        "query": _query(setting, choices),
        "data": data,
    })
