"""Every page, as each role, in Simplified Chinese: no English interface text outside data.

The pages come from the URL resolver: every named route outside the admin and the API is either
rendered here (with the demo-like data of the layout test, tests/test_layout_browser.py) or listed
in NOT_PAGES (JSON, files, POST-only actions); a new page that is neither fails the test.

A page's visible text (and its titles, placeholders, labels and button values) is read from the
HTML; text inside code, kbd, pre, script, style and textarea, and in elements marked lang="en" or
translate="no", is skipped. What is left is split into
English phrases; a phrase is data when it occurs in the database's own text (student answers,
statements, rubrics, transcripts, judge outputs, names of exams, settings and users: every
character, text and JSON field of the apps' models) and is otherwise allowed only when every word
of it is in ALLOWED (product names, units, codes, formula names). The JavaScript-rendered text is
checked by the Playwright walk (tests/test_i18n_browser.py).
"""
import json
import re
from html.parser import HTMLParser

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import models
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse

from accounts.services import set_user_language
from annotation import services as annotation_services

from .studies.helpers import lexical_geometry_run
from .test_layout_browser import _demo_with_cases, _pages

pytestmark = pytest.mark.django_db

ROLES = ("annotator1", "reviewer", "admin")

# Named routes that are not HTML pages a person reads: JSON progress, files, redirects after a
# POST, the JavaScript catalog; the API's Swagger page is a third-party interface.
NOT_PAGES = {
    "logout", "api_token",  # api_token: the account page's old address, a redirect
    "javascript-catalog", "api-schema", "api-docs",
    "annotation:import_job_progress", "annotation:label_next", "annotation:export_progress",
    "annotation:export_download", "annotation:exam_anchoring", "annotation:import_choose",
    "ocr:class_upload", "ocr:class_pending_discard", "ocr:batch_add_files", "ocr:batch_assign", "ocr:batch_run_engine", "ocr:batch_retry",
    "ocr:batch_assign_labels", "ocr:batch_packets_fix", "ocr:batch_progress", "ocr:page_image",
    "ocr:flag_transcript",
    "grading:judge_run_progress", "grading:judge_run_cancel", "grading:judge_run_resume", "grading:judge_run_estimate",
    "grading:judge_generation_progress", "grading:judge_generation_cancel", "grading:judge_generation_resume",
    "grading:review_metrics_csv", "grading:review_meta_eval_run_start", "grading:review_meta_eval_run_cancel",
    "grading:review_meta_eval_run_resume", "grading:review_meta_eval_run_progress", "studies:probe_run_progress", "studies:probe_run_cancel",
    "grading:judge_endpoint_test", "studies:probe_estimate",
    "studies:probe_run_resume", "studies:geometry_run_progress", "studies:geometry_run_results",
    "studies:geometry_run_segments", "studies:geometry_run_cancel", "studies:geometry_run_resume",
    "egress:call_log_export",
    "validity:assign",  # POST only: its result is the Validity page's message
}

# Words that are the same in a Chinese interface: product and library names, file formats, units,
# statistics and keyboard keys, technical codes.
ALLOWED = set("""
RealMath Workbench Eval IneqMath OCR CER LLM LLMs CAS API JSON JSONL CSV Parquet LaTeX KaTeX TeX Markdown
Math Verify SymPy RapidOCR tesseract vision OpenAI Django Axes Swagger scikit learn krippendorff
MSE MAE FR MAD ICC Pearson Spearman Krippendorff Cohen's Cohen kappa Wilson Levenshtein Unicode NFKC
SHA sha PDF JPEG PNG TIFF HEIC zip URL HTTP HTTPS W3C TextQuoteSelector
Ctrl Alt Shift Enter Esc Tab px ms MB KB pt dpi token tokens p50 p95 Retry After
ROSTER TEMPLATE csv json pages_per_student student_id docs md labelling studies
OPENAI_BASE_URL EXPORT_ROOT IMPORT_ROOT manifest
gpt v1 v2 v3 Acc ok n k d Tesseract parquet Overall Score chi eng md
Qwen Qwen3 Embedding Top UMAP HDBSCAN GMM BIC SVD TF IDF Ward gram nats vLLM
Benjamini Hochberg Yekutieli Bonferroni Holm Fleiss Shrout Fleiss' Shrout's Clopper echo logprobs
Calderon Reichart Dror Angelopoulos Duchi Zrnic et al PPI PPI++ LTT ProcessBench
""".split())

# Codes that the interface must name in words (issue 39): judge kinds, answer sources, probes,
# prompt strategies, split rules, the OCR-vs-judge attribution tags. They stay codes in data, the
# API and exports; on a Chinese page they are interface text, never data and never "code".
def _interface_codes():
    from annotation.models import Response
    from grading.judges.strategies import STRATEGIES
    from grading.labels import LABELS
    from grading.models import JudgeSetting
    from studies.probes import PROBES
    from studies.selectors import TAGS

    return ({code for code, _ in JudgeSetting.Kind.choices} | {code for code, _ in Response.Source.choices}
            | set(PROBES) | set(STRATEGIES) | {code for code, _ in JudgeSetting.SplitRule.choices} | set(TAGS)
            | set().union(*LABELS.values())) - {"", "none", "answer", "class", "exam"}  # words data may hold as they are


INTERFACE_CODES = _interface_codes()

# Fields the app writes sentences into (shown through core.stored_text or a display function):
# interface text, not data.
APP_WRITTEN = {("ocr", "scanfile", "message"), ("ocr", "packetedit", "summary"), ("ocr", "packetedit", "responses"),
               ("ocr", "packetedit", "changes"), ("ocr", "page", "assignment_note"), ("grading", "judgerun", "note")}

# Characters that glue words into one phrase (an English phrase is checked as a whole against the data).
PHRASE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9'’_\-.]*(?:[ \t:,/()+&]+[A-Za-z0-9][A-Za-z0-9'’_\-.]*)*")
WORD = re.compile(r"[A-Za-z][A-Za-z'’_\-]*")
PLACEHOLDER = re.compile(r"<[a-z_]+>|\{\{ ?[a-z_]+ ?\}\}")  # <model>, {{ problem }}: formats, not words
TEX = re.compile(r"\\[A-Za-z]+|\$")  # TeX source (examples, formulas): math, not interface text
SKIP_TAGS = {"script", "style", "code", "kbd", "pre", "textarea", "samp", "svg", "math"}
TEXT_ATTRS = {"title", "placeholder", "aria-label", "alt"}


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.skip = 0
        self.stack = []
        self.chunks = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        void = tag in {"br", "img", "input", "meta", "link", "hr", "source", "col", "wbr"}
        if not void:
            skipped = (tag in SKIP_TAGS or "katex" in (attrs.get("class") or "") or attrs.get("lang") == "en"
                       or attrs.get("translate") == "no")
            self.stack.append((tag, skipped))
            # Code, math, what the page declares English (the methods report, a document for a
            # paper, is an export) or not to be translated (translate="no": the answer check's
            # word lists, the engine's own vocabulary).
            if skipped:
                self.skip += 1
        for name in TEXT_ATTRS:
            if attrs.get(name):
                self.chunks.append(attrs[name])
        if tag == "input" and (attrs.get("type") or "") in {"submit", "button", "reset"} and attrs.get("value"):
            self.chunks.append(attrs["value"])

    def handle_endtag(self, tag):
        while self.stack:
            top = self.stack.pop()
            if top[1]:
                self.skip -= 1
            if top[0] == tag:
                break

    def handle_data(self, data):
        if not self.skip and data.strip():
            self.chunks.append(data)


def visible_text(html):
    parser = _Text()
    parser.feed(html)
    return parser.chunks


# Chinese punctuation (docs/glossary-zh.md): a Chinese sentence ends with "。", not "."; a bracket
# opened in Chinese closes in Chinese. The page's text is read as a stream, tags dropped and code
# (code, kbd...) kept as one mark, so that "<a>返回首页</a>." and "的 <code>x</code>." are seen.
CJK = "\u3400-\u9fff\u3000-\u303f\uff00-\uffef"
CODE_MARK = "\u2063"
BLOCK_TAGS = {"p", "div", "li", "ul", "ol", "td", "th", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6", "br",
              "section", "article", "header", "footer", "nav", "main", "form", "option", "select",
              "dt", "dd", "dl", "summary", "details", "figcaption", "caption", "hr", "title", "textarea"}
PUNCTUATION_SLIPS = (
    (re.compile(f"[{CJK}][.):]"), "ASCII . ) or : after Chinese"),
    (re.compile(f"[{CJK}] ?{CODE_MARK} ?[.)]"), "ASCII . or ) after code in a Chinese sentence"),
    (re.compile(r"（[^（）)\n]*\)"), "（ closed by )"),
)

class _Stream(_Text):
    def handle_starttag(self, tag, attrs):
        skipped_before, length = self.skip, len(self.chunks)
        super().handle_starttag(tag, attrs)
        del self.chunks[length:]  # titles and placeholders are not part of the sentence
        if tag in BLOCK_TAGS:
            self.chunks.append("\n")
        if self.skip > skipped_before and not skipped_before:
            self.chunks.append(CODE_MARK)

    def handle_endtag(self, tag):
        super().handle_endtag(tag)
        if tag in BLOCK_TAGS:
            self.chunks.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.chunks.append(data)


def punctuation_slips(html):
    """Places where a Chinese page uses ASCII punctuation after Chinese text, or closes "（" with ")"."""
    parser = _Stream()
    parser.feed(html)
    stream = "".join(parser.chunks)
    found = []
    for pattern, what in PUNCTUATION_SLIPS:
        for match in pattern.finditer(stream):
            found.append(f"{what}: …{stream[max(0, match.start() - 30):match.end() + 10].strip()}…")
    return found


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


class Data:
    """Every text the database holds (the data a page may show as it is)."""

    def __init__(self):
        parts = set()
        for app in ("annotation", "ocr", "grading", "egress", "auth"):
            for model in apps.get_app_config(app).get_models():
                fields = [f.name for f in model._meta.concrete_fields
                          if isinstance(f, models.CharField | models.TextField | models.JSONField | models.FileField)
                          and (app, model._meta.model_name, f.name) not in APP_WRITTEN
                          and not f.name.endswith("_parts")]
                for row in (model.objects.values_list(*fields) if fields else []):
                    for value in row:
                        if isinstance(value, str) and value.startswith(("{", "[")):
                            try:
                                value = json.loads(value)
                            except ValueError:
                                pass
                        parts.update(_strings(value))
                if (app, model._meta.model_name) not in {(a, m) for a, m, _ in APP_WRITTEN}:
                    for obj in model.objects.all()[:2000]:
                        parts.add(str(obj))
        # A state or kind code ("done", "ok", "rubric") is interface when shown, not data.
        codes = {str(code) for model in apps.get_models() for f in model._meta.fields if f.choices
                 for code, _ in f.flatchoices}
        parts -= codes | INTERFACE_CODES
        self.blob = "\n".join(parts)
        # Longest first, so that a name is removed whole before a word of it.
        self.strings = sorted((p for p in parts if 3 <= len(p) <= 400 and WORD.search(p)), key=len, reverse=True)

    def strip(self, chunk):
        """The chunk without the data in it."""
        for text in self.strings:
            if len(text) <= len(chunk) and text in chunk:
                chunk = re.sub(r"(?<![A-Za-z0-9_])" + re.escape(text) + r"(?![A-Za-z0-9_])", " \u2063 ", chunk)
        return chunk


def _is_code(token):
    """Words that are not English text: identifiers, hashes, short acronyms, allowed names."""
    bare = token.strip("'’.-_,:;()")
    raw = token.strip("'’.,:;()")
    if bare in INTERFACE_CODES and raw == bare:
        return False
    if "_" in raw:
        return True  # an identifier or a file-name prefix (human_...)
    parts = [p for p in re.split(r"[-+/.]", bare) if p]
    if len(parts) > 1:
        return all(_is_code(p) for p in parts)
    return (bare in ALLOWED or len(bare) <= 1 or any(c.isdigit() for c in bare) or "_" in bare
            or (bare.isupper() and len(bare) <= 4))


def english_left(chunks, data):
    """English phrases of the page that are neither data nor made only of allowed words."""
    found = []
    for chunk in chunks:
        if not WORD.search(chunk) or TEX.search(chunk):
            continue
        chunk = PLACEHOLDER.sub(" ", chunk)
        if isinstance(data, Data):
            chunk, blob = data.strip(chunk), data.blob
        else:
            blob = data
        for match in PHRASE.finditer(chunk):
            phrase = match.group(0).strip(" \t:,/()+&.-")
            words = WORD.findall(phrase)
            if not words or all(_is_code(w) for w in phrase.split()):
                continue
            if phrase in blob and phrase not in INTERFACE_CODES:
                continue
            found.append(phrase)
    return found


def _routes(patterns, namespace=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if str(pattern.pattern).startswith(("admin/", "api/")):
                continue
            inner = namespace + (f"{pattern.namespace}:" if pattern.namespace else "")
            yield from _routes(pattern.url_patterns, inner)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield namespace + pattern.name


def _extra_pages(role, data):
    """Pages the layout test does not open: the rubric editor and versions, import reports and
    jobs, grading across the class, the packet fixer, re-judging, the review start page."""
    from annotation.models import ImportJob, ImportReport
    from grading.models import JudgeSetting

    question = data["response"].question  # its rubric was edited once (the test's set-up): versions 1 and 2
    pages = [reverse("password_change_done"), reverse("profile"),
             reverse("set_language") + "?language=en&next=/",  # the language link's page without scripts
             reverse("annotation:label_question", args=[data["annotator_response"].question_id])]
    if role == "annotator1":
        return pages
    report = ImportReport.objects.order_by("pk").first()
    job = ImportJob.objects.order_by("pk").first()
    pages += [
        reverse("annotation:question_rubric_edit", args=[question.pk]),
        reverse("annotation:question_rubric_version", args=[question.pk, 1]),
        reverse("annotation:import_report", args=[report.pk]),
        reverse("annotation:import_job", args=[job.pk]),
        reverse("ocr:batch_packets", args=[data["batch"].pk]),
        reverse("ocr:page_history", args=[data["batch"].pages.first().pk]),
        reverse("grading:review_home"),
        reverse("studies:geometry"),
        reverse("studies:geometry_run", args=[data["geometry_run"].pk]),
        reverse("grading:review_compare") + "?" + "&".join(
            f"setting={pk}" for pk in JudgeSetting.objects.filter(kind__in=["rubric", "external"]).order_by("pk").values_list("pk", flat=True)[:2]),
        reverse("grading:review_rubric_rejudge", args=[question.pk]),
        # the Validity view of a rubric judge with a simulated gold budget: all four answers shown
        reverse("validity:page") + "?budget=20&setting=" + str(
            JudgeSetting.objects.filter(kind="rubric").order_by("-pk").values_list("pk", flat=True).first()),
        # the Validity view of the demo's step-report judge: its first-wrong-step and checkpoint κ tables
        reverse("validity:page") + "?setting=" + str(
            JudgeSetting.objects.filter(step_report=True).order_by("pk").values_list("pk", flat=True).first()),
    ]
    if role == "admin":
        pages += [reverse("egress:call_log"), reverse("egress:call_log_export"),
                  reverse("egress:call_log") + "?since=yesterday&purpose=judge"]  # a filter's error, in Chinese
    return pages


def _geometry_run():
    """A finished error-geometry run on the lexical baseline (no model), as its tests make one."""
    return lexical_geometry_run()


def _provider_calls():
    """A few rows of the provider-call log, so that its page shows its tables."""
    from django.utils import timezone

    from egress.models import ProviderCall

    for purpose in ("judge", "vision-ocr", ""):
        ProviderCall.objects.create(host="api.example.org", method="POST", path="/v1/chat/completions",
                                    purpose=purpose, answer_ids=[1], bytes_sent=1200, bytes_received=300, status=200,
                                    started=timezone.now(), duration_ms=80)


def _import_job(user):
    """One background import (queued), so that its page exists."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotation.importers.services import create_import_job
    from tests.conftest import REALMATH_HUMAN

    upload = SimpleUploadedFile(REALMATH_HUMAN.name, REALMATH_HUMAN.read_bytes())
    return create_import_job(user, "realmath", upload)


def test_every_page_in_chinese_has_no_english_interface_text(client, settings, tmp_path):
    settings.IMPORT_ROOT = tmp_path / "imports"
    settings.EXPORT_ROOT = tmp_path / "exports"
    data = _demo_with_cases()
    users = {u.username: u for u in get_user_model().objects.all()}
    _import_job(users["reviewer"])
    data["geometry_run"] = _geometry_run()
    _provider_calls()
    question = data["response"].question
    annotation_services.edit_rubric(question, reference_solution=question.reference_solution,
                                    full_score=question.full_score + 1, user=users["reviewer"], note="i18n test")
    text = Data()
    covered, problems = set(), []
    for role in ROLES:
        user = users[role]
        set_user_language(user, "zh-hans")
        client.force_login(user)
        urls = [url for url, _ in _pages(role, data)] + _extra_pages(role, data)
        for url in urls:
            name = resolve(url.split("?")[0]).view_name
            covered.add(name)
            if name in NOT_PAGES:
                continue
            answer = client.get(url, follow=True)
            if answer.status_code != 200:
                problems.append(f"{role} {url}: status {answer.status_code}")
                continue
            html = answer.content.decode()
            if 'lang="zh-Hans"' not in html:
                problems.append(f"{role} {url}: not served in Chinese")
            left = english_left(visible_text(html), text)
            if left:
                problems.append(f"{role} {url}: {sorted(set(left))[:40]}")
            slips = punctuation_slips(html)
            if slips:
                problems.append(f"{role} {url}: punctuation {slips[:10]}")
        client.logout()
    client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    answer = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    left = english_left(visible_text(answer.content.decode()), text)
    if left:
        problems.append(f"login: {sorted(set(left))}")
    covered.add("login")
    missing = sorted(set(_routes(get_resolver().url_patterns)) - covered - NOT_PAGES)
    if missing:
        problems.append(f"pages this test does not open (add them, or to NOT_PAGES if not a page): {missing}")
    assert not problems, "\n".join(problems)


def test_the_check_finds_english_interface_text():
    """The checker itself: interface English is reported, data, allowed words and code are not."""
    html = ('<p>保存</p><p>Save draft</p><p title="Zoom in">x</p><code>for x in y</code>'
            '<p>Scripted demo judge</p><p>MSE · FR · Ctrl Enter</p>')
    assert english_left(visible_text(html), "Scripted demo judge (made-up scores)") == ["Save draft", "Zoom in"]
    # Codes the interface names in words (issue 39) are English left, even in data or with "_" / "-".
    codes = '<td>drop-final-answer</td><td>cas_final_answer</td><td>human</td><span class="tag">both</span><td>计算笔误</td>'
    assert english_left(visible_text(codes), "drop-final-answer human both") == [
        "drop-final-answer", "cas_final_answer", "human", "both"]
