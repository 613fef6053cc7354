"""Every page route, its query parameters and its forms, with odd values: never a 500.

The routes come from the URL resolver (a new page is fuzzed without being listed here). Each is
opened with a real object of its kind where it takes an id; then its query parameters (the
names of the page's own form fields, and the names every list reads) and each of its POST forms
are sent values Python reads too kindly or a database cannot hold: non-ASCII digits ("²" and
"٣" pass str.isdigit), a NUL byte (PostgreSQL cannot store one), numbers of 25 digits and other
out-of-range integers, special floats, and each parameter twice. Any 5xx fails, with the
route, method, field and value. Nothing here is database-specific: the lead runs it on
PostgreSQL too (issue 29, item 14).
"""
import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.test import Client

from annotation.models import ExportJob, ImportJob, ImportReport, Label, Question, Response
from grading.models import GenerationRun, JudgeResult, JudgeRun, JudgeSetting, LlmEndpoint, MetaEvalRun
from ocr.models import Page, ScanBatch
from ocr.services import Upload, create_batch, ingest_uploads
from studies.models import ProbeRun

from .conftest import make_user, url_routes
from .factories import make_imported_gold, make_question, make_responses, make_results, make_stored_setting
from .ocr.conftest import distinct_image, png_bytes

pytestmark = pytest.mark.django_db

ODD = ["²", "٣", "9" * 25, "-9223372036854775809", "a\x00b", "1e400", "NaN", " "]
# Query parameters the lists and pages read, beside the fields their own forms name.
COMMON_PARAMS = [
    "q", "page", "question", "exam", "source", "level", "status", "gold_status", "score_min", "score_max",
    "batch", "config", "setting", "run", "response", "threshold", "state", "copy", "annotation", "by_question",
    "metric", "format", "download", "probe", "positive", "imported", "endpoint", "version", "kind", "next",
]
SKIPPED = ("admin/", "api/", "accounts/logout/")  # the API has its own fuzz (test_api_fuzz.py); logout ends the session
NO_POST = ("accounts/password/", "accounts/login/")  # wrong passwords would lock the test users out


def page_routes():
    return sorted({route for route in url_routes() if not route.startswith(SKIPPED)})


ROUTES = page_routes()

# Which kind of object a route's ids name, by the start of the route (first match wins).
KINDS = [
    ("import/jobs/", ImportJob), ("import/", ImportReport), ("label/question/", Question), ("label/", Response),
    ("adjudication/", Response), ("export/", ExportJob), ("questions/", Question), ("responses/", Response),
    ("ocr/batches/", ScanBatch), ("ocr/pages/", Page), ("ocr/responses/", Response),
    ("grading/judges/settings/", JudgeSetting), ("grading/judges/endpoints/", LlmEndpoint),
    ("grading/judges/runs/", JudgeRun), ("grading/judges/results/", JudgeResult),
    ("grading/judges/generation/", GenerationRun), ("grading/review/disagreements/", JudgeResult),
    ("grading/review/prelabel/", MetaEvalRun), ("grading/review/rubric/", Question),
    ("grading/review/validation/", Response), ("studies/probes/runs/", ProbeRun),
]
_PARAM = re.compile(r"<(?:(\w+):)?(\w+)>")


def concrete(route):
    """The route with its ids filled by real rows (a number no row has where none exists)."""
    model = next((kind for prefix, kind in KINDS if route.startswith(prefix)), None)

    def fill(match):
        converter, name = match.group(1), match.group(2)
        if converter == "str":
            return "display" if name == "kind" else "x"
        if name == "version":
            return "1"
        row = model.objects.order_by("pk").first() if model is not None else None
        return str(row.pk) if row is not None else "987654321"

    return "/" + _PARAM.sub(fill, route)


class Forms(HTMLParser):
    """The field names of a page, and its POST forms (action and field names)."""

    def __init__(self):
        super().__init__()
        self.fields, self.forms, self._form = set(), [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self._form = {"action": attrs.get("action") or "", "method": (attrs.get("method") or "get").lower(),
                          "fields": {}}
            self.forms.append(self._form)
        elif tag in ("input", "select", "textarea", "button") and attrs.get("name"):
            if attrs.get("type") == "file":
                return
            self.fields.add(attrs["name"])
            if self._form is not None:
                self._form["fields"][attrs["name"]] = attrs.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None


@pytest.fixture
def world(db):
    """One of each kind of object the pages open, on a blind exam."""
    annotator, reviewer = make_user("fuzz-ann", "annotator"), make_user("fuzz-rev", "reviewer")
    admin = make_user("fuzz-admin", "admin")
    question = make_question(exam_name="Fuzz exam", location="3-17")
    responses = make_responses(question, 3, gold=5)
    make_imported_gold(responses[:1], total=4)
    Label.objects.create(response=responses[1], annotator=annotator, total=3, sub_scores={"(1)": 3}, submitted=True)
    setting = make_stored_setting("fuzz-judge")
    make_results(setting, responses, [1, 2, 3])
    endpoint = LlmEndpoint.objects.create(name="fuzz-endpoint", base_url="http://127.0.0.1:9/v1")
    JudgeRun.objects.create(setting=setting, status=JudgeRun.Status.DONE)
    ExportJob.objects.create(format="jsonl", created_by=reviewer)
    ImportReport.objects.create(kind="dataset", file_name="x.jsonl", file_sha256="0" * 64)
    batch = create_batch(exam=question.exam, engine="tesseract", user=reviewer)
    ingest_uploads(batch, [Upload("s1_3-17_1.png", png_bytes(distinct_image(5)))])  # its OCR is queued on commit: never here
    assert Page.objects.exists()
    return {"annotator": annotator, "reviewer": reviewer, "admin": admin, "endpoint": endpoint}


def client_for(user):
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def _send(client, method, url, data, failures, what):
    answer = getattr(client, method)(url, data)
    if answer.status_code >= 500:
        failures.append((method.upper(), url, what, answer.status_code))
    return answer


def fuzz_route(client, route, *, forms=True):
    url = concrete(route)
    failures = []
    first = _send(client, "get", url, {}, failures, "no parameters")
    page = Forms()
    if first.status_code == 200 and "html" in first.get("Content-Type", ""):
        page.feed(first.content.decode("utf-8", "replace"))
    names = sorted(set(COMMON_PARAMS) | page.fields - {"csrfmiddlewaretoken"})
    for value in ODD:
        _send(client, "get", url, {name: value for name in names}, failures, f"every parameter = {value!r}")
    _send(client, "get", url, {name: ["1", "²"] for name in names}, failures, "every parameter twice")
    for name in sorted(page.fields - {"csrfmiddlewaretoken"}):
        _send(client, "get", url, {name: "²"}, failures, f"{name}=²")
    if not forms or route.startswith(NO_POST):
        return failures
    posts = [form for form in page.forms if form["method"] == "post"]
    if first.status_code == 405:  # a POST-only route: its fields are the common names
        posts = [{"action": url, "fields": dict.fromkeys(COMMON_PARAMS, "")}]
    for form in posts:
        target = urlsplit(form["action"]).path or url
        if target.startswith(("/accounts/logout", "/admin/", "/api/")):
            continue
        fields = [name for name in form["fields"] if name != "csrfmiddlewaretoken"]
        for value in ODD:
            _send(client, "post", target, {name: value for name in fields}, failures,
                  f"form fields {fields[:6]} = {value!r}")
        _send(client, "post", target, {name: [form["fields"][name] or "1", "²"] for name in fields}, failures,
              "every form field twice")
    return failures


@pytest.mark.parametrize("route", ROUTES)
def test_no_page_answers_500_to_odd_input(world, route):
    failures = fuzz_route(client_for(world["admin"]), route)
    failures += fuzz_route(client_for(world["annotator"]), route, forms=False)
    assert not failures, failures


def test_the_resolver_gives_the_pages(world):
    assert len(ROUTES) > 60 and "responses/" in ROUTES and "ocr/batches/<int:pk>/assign/" in ROUTES


@pytest.mark.parametrize("url", ["/responses/", "/export/", "/grading/judges/runs/new/"])
def test_a_nul_byte_in_q_is_refused_with_400(world, url):
    """PostgreSQL cannot compare a string holding NUL: these pages answered 500 there."""
    answer = client_for(world["reviewer"]).get(url, {"q": "x\x00y"})
    assert answer.status_code == 400 and "NUL byte" in answer.content.decode()
    answer = client_for(world["reviewer"]).post("/grading/judges/runs/new/", {"q": "\x00"})
    assert answer.status_code == 400
    assert client_for(world["reviewer"]).get(url, {"q": "xy"}).status_code == 200


def test_the_api_answers_a_nul_byte_itself_after_the_role_check(world):
    from .conftest import api_client_for

    answer = api_client_for(world["reviewer"]).get("/api/responses/", {"q": "x\x00y"})
    assert answer.status_code == 400 and "q" in answer.json()
    assert api_client_for(world["annotator"]).get("/api/judge-runs/", {"q": "x\x00y"}).status_code == 403
