"""Every DRF write route (found from the URL resolver, aliases included) gets hostile JSON bodies:
nested 5,000 and 150 deep, integers of 5,001 digits and 2**63, 1e999, NUL characters, and wrong
JSON types for the body and for each field of its schema, as an annotator (assigned the
responses) and an admin. No answer may be a 5xx (issue 40: a 5,000-deep body was a
500 on every write route, base_version 2**63 on the label route, `[]` on resume).

Marker `fuzz`: `make test-fuzz` (its own CI step) runs it, `make test` leaves it out.
"""
import json
import re

import pytest
from django.test import Client
from django.urls import URLResolver, get_resolver, resolve
from drf_spectacular.generators import SchemaGenerator
from rest_framework.views import APIView

from .conftest import make_user

pytestmark = pytest.mark.fuzz

WRITE_METHODS = ("post", "put", "patch", "delete")
MARK = 4242424242424  # stands for a literal json.dumps cannot write
LITERALS = {  # placeholder -> the JSON text sent in its place
    MARK + 1: "9" * 5001, MARK + 2: "-" + "9" * 5001, MARK + 3: "1e999", MARK + 4: "-1e999",
    MARK + 5: "[" * 5000 + "]" * 5000, MARK + 6: '{"a": ' * 3000 + "1" + "}" * 3000,
}
FIELD_VALUES = [MARK + 1, MARK + 3, MARK + 5, 2**63, -1, "x", "a\x00b", None, True, [], {"a": {"b": []}}]
NESTED_150 = {"a": json.loads("[" * 150 + "]" * 150)}
WHOLE_BODIES = [*(LITERALS[key] for key in LITERALS), json.dumps(NESTED_150), str(2**63), "[]", '"x"', "null", "true",
                "1.5", "{}", '{"a": "\\u0000"}', '{"\\u0000": 1}', "[1, 2", "", "{" * 100000]


def _json(body):
    text = json.dumps(body)
    for key, literal in LITERALS.items():
        text = text.replace(str(key), literal)
    return text


def _routes(resolver=None, prefix=""):
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern)


def write_routes():
    """(method, path with {params}, view class) of every DRF route that writes."""
    found = []
    for route in _routes():
        if "format" in route:
            continue
        path = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", route)
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", path).replace("^", "").replace("$", "").replace("\\", "")
        if not path.startswith("/api/"):
            continue
        match = resolve(re.sub(r"\{\w+\}", "1", path))
        view = getattr(match.func, "cls", None)
        if view is None or not issubclass(view, APIView):
            continue
        actions = getattr(match.func, "actions", None)
        methods = [m for m in (actions or {}) if m in WRITE_METHODS] if actions else \
            [m for m in WRITE_METHODS if hasattr(view, m)]
        found += [(method, path, view) for method in methods]
    return found


ROUTES = write_routes()
SCHEMA = SchemaGenerator().get_schema(request=None, public=True)


def _properties(method, path):
    """The JSON body's field names of an operation, from the schema (aliases: by their view's
    main path); [] when it takes no JSON body."""
    schema_path = re.sub(r"\{(pk)\}", "{id}", path)
    operation = SCHEMA["paths"].get(schema_path, {}).get(method)
    if operation is None:
        return []
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    ref = body.get("$ref", "")
    if ref:
        body = SCHEMA["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return sorted(body.get("properties", {}))


@pytest.fixture
def world(db, settings):
    """One object of every kind a write route names, an annotator assigned to the responses,
    a reviewer and an admin; Celery tasks go to an in-memory broker (nothing runs)."""
    from annotation.labelling import services as label_services
    from annotation.models import Exam, Label, Response
    from config.celery import app
    from grading.models import GenerationRun, JudgeResult, JudgeRun, JudgeSetting, LlmEndpoint, MetaEvalRun
    from ocr.models import Page, ScanBatch, ScanFile
    from studies.models import GeometryRun, ProbeRun

    settings.ALLOWED_HOSTS = ["*"]
    previous = app.conf.broker_url, app.conf.task_always_eager
    app.conf.broker_url, app.conf.task_always_eager = "memory://", False
    annotator, reviewer, admin = (make_user("hb-annotator", "annotator"), make_user("hb-reviewer", "reviewer"),
                                  make_user("hb-admin", "admin"))
    from tests.factories import make_checkpoints, make_question, make_responses

    question = make_question("Solve $x^2 = 4$. (1) ... (2) ...", exam_name="Hostile bodies")
    make_checkpoints(question)
    make_responses(question, 3)
    make_responses(question, 2, source="synthetic", start=10, gold=5)
    responses = Response.objects.order_by("pk")[:3]
    label_services.assign_responses(responses=Response.objects.filter(pk__in=[r.pk for r in responses]),
                                    annotators=[annotator], per_response=1, strategy="round_robin")
    first = responses[0]
    Label.objects.create(response=first, annotator=annotator, sub_scores={}, version=1)
    endpoint = LlmEndpoint.objects.create(name="hb", base_url="http://127.0.0.1:9/v1", api_key_env="OPENAI_API_KEY")
    setting = JudgeSetting.objects.create(name="hb-setting", version=1, kind=JudgeSetting.Kind.EXTERNAL, model="m")
    JudgeRun.objects.create(setting=setting, status="done")
    GenerationRun.objects.create(endpoint=endpoint, model_names=["m"], temperatures=[0], status="done")
    MetaEvalRun.objects.create(endpoint=endpoint, model="m", prompt_version="v1", status="done")
    ProbeRun.objects.create(setting=setting, probes=["drop-final-answer"], status="done")
    GeometryRun.objects.create(status="done")
    JudgeResult.objects.create(setting=setting, response=first, cache_key="hb", status="ok", score=3.0)
    batch = ScanBatch.objects.create(name="hb", exam=Exam.objects.order_by("pk").first(), engine="tesseract")
    source = ScanFile.objects.create(batch=batch, original_name="p.png", status="accepted")
    source.stored = "hb/p.png"
    source.save()
    Page.objects.create(batch=batch, source_file=source, index_in_file=0, width=10, height=10, response=first,
                        question=first.question, student_id=first.student_id, page_number=1)
    yield {"annotator": annotator, "reviewer": reviewer, "admin": admin, "response": first}
    app.conf.broker_url, app.conf.task_always_eager = previous


def _ids(view, name, world):
    """An existing id for a path parameter: the route's own model, or the response of a label."""
    from annotation.models import Response
    from grading.models import JudgeResult

    if name == "response_id":
        return world["response"].pk
    if name == "result_id":
        return JudgeResult.objects.order_by("pk").first().pk
    queryset = getattr(view, "queryset", None)
    row = queryset.model.objects.order_by("pk").first() if queryset is not None else None
    return row.pk if row is not None else Response.objects.order_by("pk").first().pk


def _bodies(properties):
    yield from WHOLE_BODIES
    for name in properties:
        for value in FIELD_VALUES:
            yield _json({name: value})


def test_every_write_route_is_covered():
    paths = {path for _, path, _ in ROUTES}
    assert len(ROUTES) >= 35 and "/api/labels/{response_id}/" in paths and "/api/judge-runs/{pk}/resume/" in paths
    assert "/api/review/prelabel-runs/{pk}/resume/" in paths  # aliases out of the schema too


@pytest.mark.parametrize("method, path, view", ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_hostile_bodies_never_make_a_5xx(world, method, path, view):
    """As the annotator (assigned the responses: the label routes parse her bodies) and the admin
    (past every role check, so every route parses); a reviewer's routes are the admin's minus
    role checks, which come before any body is read."""
    url = re.sub(r"\{(\w+)\}", lambda m: str(_ids(view, m.group(1), world)), path)
    properties = _properties(method, path) or _properties(method, path.replace("/prelabel-runs/", "/meta-eval-runs/")
                                                              .replace("/judge-configs/", "/judge-settings/"))
    failures = []
    for who in ("annotator", "admin"):
        client = Client()
        client.force_login(world[who])
        for body in _bodies(properties):
            answer = getattr(client, method)(url, body, content_type="application/json")
            if answer.status_code >= 500:
                failures.append((who, answer.status_code, body[:80]))
    assert not failures, f"{method.upper()} {url}: {failures[:5]}"
