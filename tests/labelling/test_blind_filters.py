"""Blind mode holds through every filter, ordering and search of every list, in the API and the pages.

The walk: an annotator on a blind exam requests every GET route of the API (from the OpenAPI
schema) and every page they may open, with every query parameter the route takes and values
chosen to narrow by hidden data (gold scores, gold statuses, statuses that tell of other labels,
other people's labels, judge scores). Then the hidden data is rotated among the responses the
annotator may not see, and the walk runs again: every answer must be byte for byte the same.
The same walk as a reviewer must see changes, which shows the values do select by hidden data.

A new query parameter, route or page fails the walk until it is given values here.
"""
import re
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import resolve, reverse
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator

from annotation.models import Assignment, Label, Response
from annotation.selectors import RESPONSE_FILTERS, SCORE_FILTERS
from grading.models import JudgeResult, JudgeSetting

from ..conftest import api_client_for, make_user, url_routes
from ..factories import make_question, make_responses

pytestmark = pytest.mark.django_db

N_HIDDEN = 10
SCORES = ["2.5", "5", "8"]
HIDDEN_DATA_PARAMS = {*SCORE_FILTERS, "status", "submitted", "is_imported"}
# Query parameters that select by hidden data on some route: each must show a change to a reviewer.

# Pages an annotator may open, each with the query parameters it reads.
PAGE_PARAMS = {
    "/": (),
    "/questions/": (),
    "/exams/": (),
    "/responses/": (*RESPONSE_FILTERS, "page"),
    "/label/": ("state", "page"),
    "/grading/equivalence/": ("pred", "gold"),
}


@pytest.fixture
def world(db):
    """A blind exam: 10 responses the annotator may not see the scores of (other people's labels,
    imported gold, judge results, every gold status and label-derived status among them), 2 they
    labelled themselves; and an exam that is not blind."""
    annotator, other, reviewer = make_user("blind-ann", "annotator"), make_user("other-ann", "annotator"), make_user("rev", "reviewer")
    blind_q = make_question(exam_name="Blind exam", blind=True)
    open_q = make_question("Open question", exam_name="Open exam", blind=False, location="O-01", level="high")
    hidden = make_responses(blind_q, N_HIDDEN)
    own = make_responses(blind_q, 2, start=N_HIDDEN, source="synthetic")
    public = make_responses(open_q, 3, start=20)
    statuses = [Response.Status.READY, Response.Status.LABELLED, Response.Status.ADJUDICATED]
    gold_statuses = list(Response.GoldStatus.values)
    for i, response in enumerate(hidden):
        Response.objects.filter(pk=response.pk).update(
            gold_score=None if i == N_HIDDEN - 1 else Decimal(i), gold_status=gold_statuses[i % len(gold_statuses)],
            status=statuses[i % len(statuses)],
        )
    Response.objects.filter(pk=hidden[3].pk).update(status=Response.Status.TRANSCRIBING)  # not hidden data: kept
    for i, response in enumerate([*own, *public]):
        Response.objects.filter(pk=response.pk).update(gold_score=Decimal(4 + i), gold_status="single", status="labelled")
    for i, response in enumerate(hidden[:6]):
        Label.objects.create(response=response, annotator=other, total=i, sub_scores={"(1)": i}, submitted=i % 2 == 0)
    for response in hidden[6:8]:
        Label.objects.create(response=response, is_imported=True, total=7, sub_scores={"(1)": 7}, submitted=True)
    Label.objects.create(response=hidden[0], annotator=annotator, total=1, sub_scores={"(1)": 1})  # my draft
    for response in own:
        Label.objects.create(response=response, annotator=annotator, total=5, sub_scores={"(1)": 5}, submitted=True)
    Assignment.objects.bulk_create(Assignment(response=r, annotator=annotator) for r in [*hidden[:5], *own])
    Assignment.objects.bulk_create(Assignment(response=r, annotator=other) for r in hidden[:6])
    setting = JudgeSetting.objects.create(name="blind-judge", version=1, kind=JudgeSetting.Kind.EXTERNAL, model="m")
    result_statuses = [JudgeResult.Status.OK, JudgeResult.Status.INVALID, JudgeResult.Status.ERROR]
    for i, response in enumerate([*hidden, *own, *public]):
        JudgeResult.objects.create(setting=setting, response=response, cache_key=f"k{i}", score=i % 10,
                                   status=result_statuses[i % 3])
    return {
        "annotator": annotator, "other": other, "reviewer": reviewer, "hidden": hidden, "own": own,
        "public": public, "blind_q": blind_q, "open_q": open_q, "config": setting,
    }


def rotate_hidden_data(world):
    """Move the hidden data of the responses the annotator may not see one response along
    (the annotator's own draft and everything they may see stay as they are)."""
    hidden = [r.pk for r in world["hidden"]]
    rows = {r["pk"]: r for r in Response.objects.filter(pk__in=hidden).values("pk", "gold_score", "gold_status", "status")}
    for pk, source in zip(hidden, hidden[1:] + hidden[:1]):
        status = rows[source]["status"]
        if Response.Status.TRANSCRIBING in (status, rows[pk]["status"]):
            status = rows[pk]["status"]
        # A real adjudication also saves the response: its `updated` time moves too.
        Response.objects.filter(pk=pk).update(gold_score=rows[source]["gold_score"], gold_status=rows[source]["gold_status"],
                                              status=status, updated=timezone.now())
    for label in Label.objects.filter(response__in=hidden).exclude(annotator=world["annotator"]):
        Label.objects.filter(pk=label.pk).update(total=10 - label.total, submitted=not label.submitted,
                                                 is_imported=not label.is_imported)
    statuses = [JudgeResult.Status.OK, JudgeResult.Status.INVALID, JudgeResult.Status.ERROR]
    for result in JudgeResult.objects.filter(response__in=hidden):
        JudgeResult.objects.filter(pk=result.pk).update(
            score=9 - result.score, status=statuses[(statuses.index(result.status) + 1) % 3]
        )


def param_values(world):
    """Values to try per query parameter name (any route). A parameter missing here fails the walk."""
    ids = lambda objects: [str(o.pk) for o in objects]  # noqa: E731
    hidden = world["hidden"]
    return {
        "source": ["human", "synthetic"],
        "level": ["low", "high"],
        "question": ids([world["blind_q"], world["open_q"]]),
        "exam": ids([world["blind_q"].exam, world["open_q"].exam]),
        "status": sorted({*Response.Status.values, *JudgeResult.Status.values}),
        "gold_status": list(Response.GoldStatus.values),
        "score_min": SCORES,
        "score_max": SCORES,
        "q": ["human-00000", "Answer 7"],
        "response": ids(hidden[:7]),
        "submitted": ["true", "false"],
        "is_imported": ["true", "false"],
        "annotator": ids([world["annotator"], world["other"]]),
        "strategy": list(Assignment.Strategy.values),
        "config": ids([world["config"]]),
        "setting": ids([world["config"]]),  # the interface name of config (judge results and runs)
        "run": ["1"],
        "kind": ["rubric", "external"],
        "location": ["T-01", "O-01"],
        "name": ["blind-judge"],
        "model": ["m"],
        "format": ["jsonl", "csv"],
        "state": ["todo", "done", "all"],
        "pred": ["1"],
        "gold": ["1"],
        "page": ["1", "2"],
    }


def combinations(values):
    """Pairs that narrow hardest: one score, within a question (the leak the issue reported)."""
    for score in SCORES:
        yield {"score_min": score, "score_max": score}
        yield {"question": values["question"][0], "score_min": score, "score_max": score}
    for status in Response.GoldStatus.values:
        yield {"gold_status": status, "score_min": "0"}


def api_routes():
    """Every GET route of the API: (path template, query parameter names)."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, operations in schema["paths"].items():
        if "get" in operations:
            yield path, [p["name"] for p in operations["get"].get("parameters", []) if p["in"] == "query"]


def needs_reviewer(path):
    match = resolve(path)
    view = getattr(match.func, "cls", None) or getattr(match.func, "view_class", None)
    return any(getattr(p, "role", None) in ("reviewer", "admin") for p in getattr(view, "permission_classes", []))


def detail_ids(world):
    """Ids to put into each kind of API path (the first path segment names the kind): a few
    objects whose scores the annotator may not see, with different hidden data."""
    hidden = world["hidden"]
    labels = Label.objects.filter(response__in=hidden).exclude(annotator=world["annotator"])
    labels = [labels.filter(submitted=True, is_imported=False), labels.filter(submitted=False), labels.filter(is_imported=True)]
    results = JudgeResult.objects.filter(response__in=hidden[:2]).values_list("pk", flat=True)
    return {
        "responses": [str(r.pk) for r in hidden[:3]],
        "labels": [str(r.pk) for r in hidden[:3]],
        "annotations": [str(queryset.values_list("pk", flat=True).first()) for queryset in labels],
        "judge-results": [str(pk) for pk in results],
        "exams": [str(world["blind_q"].exam_id)],
        "questions": [str(world["blind_q"].pk)],
    }


def api_requests(world, *, details=True):
    """(url, params) of the walk over the API routes an annotator may call (lists, and with
    `details` the routes of one object)."""
    values, ids = param_values(world), detail_ids(world)
    list_params = {}
    routes = list(api_routes())
    for path, params in routes:
        if "{" not in path:
            list_params[path] = params
    for path, params in routes:
        example = re.sub(r"\{[^}]+\}", "1", path)
        if needs_reviewer(example):
            continue
        kind = path.split("/")[2]
        if "{" in path and not details:
            continue
        if "{" in path:
            assert kind in ids, f"{path}: add ids for this kind of object to detail_ids()"
            params = params or list_params.get(f"/api/{kind}/", [])
            urls = [re.sub(r"\{[^}]+\}", pk, path) for pk in ids[kind]]
        else:
            urls = [path]
        for url in urls:
            yield url, {}
            for name in params:
                assert name in values, f"{path}: a new query parameter {name!r}; add values to param_values()"
                for value in values[name]:
                    yield url, {name: value}
            if path == "/api/responses/":
                for combo in combinations(values):
                    yield url, combo


def page_requests(world, *, details=True):
    values = param_values(world)
    for path, params in PAGE_PARAMS.items():
        yield path, {}
        for name in params:
            for value in values[name]:
                yield path, {name: value}
    for combo in combinations(values):
        yield "/responses/", combo
    if not details:
        return
    for response in world["hidden"][:3]:
        for name in ("annotation:response_detail", "annotation:label", "annotation:label_history"):
            yield reverse(name, args=[response.pk]), {}
    yield reverse("annotation:question_detail", args=[world["blind_q"].pk]), {}
    yield reverse("annotation:exam_detail", args=[world["blind_q"].exam_id]), {}  # counts of own work only


def _normalised(response):
    body = response.content.decode()
    body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", body)
    return response.status_code, re.sub(r'(csrf[-_]?token["\']?\s*[:=]\s*["\'])[^"\']*', r"\1", body, flags=re.I)


def walk(user, requests):
    """The answer to each request of the walk."""
    api, client = api_client_for(user), Client()
    client.force_login(user)
    return {(kind, url, tuple(sorted(params.items()))): _normalised((api if kind == "api" else client).get(url, params))
            for kind, url, params in requests}


def requests_of(world, *, details=True):
    return [("api", url, params) for url, params in api_requests(world, details=details)] + [
        ("page", url, params) for url, params in page_requests(world, details=details)
    ]


def test_every_annotator_page_is_walked(world):
    """The annotator pages without ids are exactly those PAGE_PARAMS lists (a new one must be added)."""
    client = Client()
    client.force_login(world["annotator"])
    open_pages = set()
    for route in set(url_routes()):
        if "<" in route or "(?P" in route or route.startswith(("admin/", "api/", "accounts/")):
            continue
        url = "/" + route.lstrip("^").replace("\\Z", "").replace("$", "")
        if client.get(url).status_code == 200:
            open_pages.add(url)
    # /healthz and /i18n/js/ (the interface's translations) hold no data.
    assert open_pages - {"/healthz", "/i18n/js/"} == set(PAGE_PARAMS)


def test_no_filter_narrows_by_hidden_data(world):
    requests, lists = requests_of(world), requests_of(world, details=False)
    before, reviewer_before = walk(world["annotator"], requests), walk(world["reviewer"], lists)
    rotate_hidden_data(world)
    after, reviewer_after = walk(world["annotator"], requests), walk(world["reviewer"], lists)

    assert not [key for key, (code, _) in before.items() if code >= 500]
    leaks = sorted({(url, tuple(name for name, _ in params)) for key in before if before[key] != after[key]
                    for _, url, params in [key]})
    assert not leaks, f"{len(leaks)} routes and parameters answer by hidden data: {leaks[:10]}"
    # The walk has teeth: for a reviewer, each hidden-data parameter changes some answer.
    changed = {name for key in reviewer_before if reviewer_before[key] != reviewer_after[key] for name, _ in key[2]}
    assert HIDDEN_DATA_PARAMS <= changed, HIDDEN_DATA_PARAMS - changed


# --- the rule, one filter at a time ----------------------------------------------------------


def _api_ids(user, params):
    body = api_client_for(user).get("/api/responses/", params).json()
    return [row["id"] for row in body["results"]]


def _page_ids(user, params):
    client = Client()
    client.force_login(user)
    return [r.pk for r in client.get("/responses/", params).context["page"].object_list]


def test_issue_example_lists_no_hidden_gold(world):
    """GET /api/responses/?question=1&score_min=8&score_max=8 listed the unlabelled responses
    whose gold is 8; now only those whose scores the annotator may see."""
    params = {"question": world["blind_q"].pk, "score_min": "8", "score_max": "8"}
    eight = Response.objects.get(question=world["blind_q"], gold_score=8)
    assert eight in world["hidden"]
    assert _api_ids(world["reviewer"], params) == [eight.pk]
    assert _api_ids(world["annotator"], params) == []
    assert _page_ids(world["reviewer"], params) == [eight.pk]
    assert _page_ids(world["annotator"], params) == []


def test_gold_filters_select_among_visible_responses(world):
    """Own submitted labels and exams that are not blind: the gold filters work there."""
    own, public = [r.pk for r in world["own"]], [r.pk for r in world["public"]]
    for params, expected in [
        ({"score_min": "4", "score_max": "5", "gold_status": "single"}, own),
        ({"score_min": "7"}, public[1:]),
        ({"gold_status": "single"}, own + public),
        ({"gold_status": "none"}, []),
    ]:
        assert _api_ids(world["annotator"], params) == expected, params
        assert _page_ids(world["annotator"], params) == expected, params
    reviewer_none = Response.objects.filter(gold_status="none").values_list("pk", flat=True)
    assert _api_ids(world["reviewer"], {"gold_status": "none"}) == sorted(reviewer_none) != []


def test_page_hides_gold_filters_and_blind_statuses(world):
    client = Client()
    client.force_login(world["annotator"])
    page = client.get("/responses/", {"score_min": "8", "gold_status": "imported"})
    html = page.content.decode()
    assert 'name="score_min"' not in html and 'name="gold_status"' not in html
    assert page.context["page"].paginator.count == 0
    labelled = [r for r in world["hidden"] if Response.objects.get(pk=r.pk).status != "ready"
                and Response.objects.get(pk=r.pk).status != "transcribing"]
    listing = client.get("/responses/", {"exam": world["blind_q"].exam_id})
    html = listing.content.decode()
    assert labelled
    for response in labelled:
        row = re.search(rf'<a href="/responses/{response.pk}/">response #{response.pk}</a>.*?</tr>', html, re.S).group(0)
        assert "<td>Ready to label</td>" in row, row
    shown = {r.pk: r.status_shown_display for r in listing.context["page"].object_list}
    assert shown[world["own"][0].pk] == "Labelled"
    rows = {row["id"]: row for row in api_client_for(world["annotator"]).get("/api/responses/").json()["results"]}
    for response in labelled:
        assert rows[response.pk]["status"] == "ready" and "gold_score" not in rows[response.pk]
    assert rows[world["own"][0].pk]["status"] == "labelled" and rows[world["own"][0].pk]["gold_score"] == "4.00"


def test_status_filter_matches_the_status_shown(world):
    """A blind annotator's "ready" includes hidden responses others labelled; "labelled" and
    "adjudicated" only responses whose scores they see."""
    hidden = {r.pk for r in world["hidden"]}
    ready = set(_api_ids(world["annotator"], {"status": "ready"}))
    not_transcribing = set(Response.objects.filter(pk__in=hidden).exclude(status="transcribing").values_list("pk", flat=True))
    assert ready == not_transcribing
    assert set(_api_ids(world["annotator"], {"status": "labelled"})) == {r.pk for r in [*world["own"], *world["public"]]}
    assert _api_ids(world["annotator"], {"status": "adjudicated"}) == []
    assert set(_page_ids(world["annotator"], {"status": "ready"})) == ready
    assert set(_api_ids(world["reviewer"], {"status": "adjudicated"})) <= hidden != set()


def test_annotator_response_list_query_count_is_flat(world):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(world["annotator"])

    def queries(params):
        with CaptureQueriesContext(connection) as context:
            assert client.get("/responses/", params).status_code == 200
        return len(context.captured_queries)

    small = queries({"score_min": "1"})
    make_responses(world["blind_q"], 200, start=100)
    assert queries({"score_min": "1"}) == small == queries({"status": "ready", "page": "2"})


# --- the anchoring experiment: the one, narrow exception ---------------------------------------

_ANCHOR_BLOCK = re.compile(r'<section class="panel" id="anchor-score">.*?</section>', re.S)


def test_anchoring_shows_the_shown_half_only_its_judge_score(world):
    """With the anchoring experiment on the blind exam, the walk answers byte for byte the same
    after the hidden data rotates, except the label pages of the assignments in the shown half,
    and those only inside their judge pre-grade block."""
    from annotation.labelling.experiment import anchor_shown
    from annotation.models import Exam

    walked = world["hidden"][:3]  # page_requests() opens the label pages of these
    annotator = world["annotator"]
    # hidden[0]'s judge result goes from OK to INVALID on rotation, so its pre-grade block must
    # change; the other two may go between INVALID and ERROR and show "no score" both times.
    seed = next(s for s in range(1000) if anchor_shown(s, walked[0].pk, annotator.pk)
                and not all(anchor_shown(s, r.pk, annotator.pk) for r in walked))
    Exam.objects.filter(pk=world["blind_q"].exam_id).update(anchoring=True, anchoring_seed=seed,
                                                            anchoring_setting=world["config"].name)
    shown = {reverse("annotation:label", args=[r.pk]) for r in walked if anchor_shown(seed, r.pk, annotator.pk)}
    requests = requests_of(world)
    before = walk(annotator, requests)
    rotate_hidden_data(world)
    after = walk(annotator, requests)

    changed = {key[1] for key in before if before[key] != after[key]}
    assert changed <= shown, f"beyond the shown half's label pages: {sorted(changed - shown)[:10]}"
    assert changed, "the shown half's pre-grade should follow the judge score"
    for key in before:
        if key[1] in shown:
            (code, html), (code_after, html_after) = before[key], after[key]
            assert code == code_after == 200 and 'id="anchor-score"' in html
            assert _ANCHOR_BLOCK.sub("", html) == _ANCHOR_BLOCK.sub("", html_after)
        elif key[0] == "page" and key[1].startswith("/label/"):
            assert 'id="anchor-score"' not in before[key][1]
