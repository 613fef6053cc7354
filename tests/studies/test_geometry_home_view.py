"""The geometry page: reviewers start a study (lexical, served, or a segments file); bad input is
refused with a message and starts nothing; annotators get 403."""
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from studies.geometry.models import GeometryRun

pytestmark = pytest.mark.django_db
URL = reverse("studies:geometry")


def segments_file(lines=None):
    lines = lines or [json.dumps({"segment_text": f"{s} answer {i}, therefore x = {i}", "sample_id": f"{s}{i}",
                                  "question": f"Q{i % 3}", "sub_id": "(1)", "real_score": 1, "max_score": 3,
                                  "analysis_subset": s}) for s in ("human", "synthetic") for i in range(8)]
    return SimpleUploadedFile("segments.jsonl", "\n".join(lines).encode(), content_type="application/x-ndjson")


def test_roles(annotator_client):
    assert Client().get(URL).status_code == 302
    assert annotator_client.get(URL).status_code == 403


def test_start_a_lexical_study_from_a_segments_file(reviewer_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = reviewer_client.post(URL, {"kind": "geometry", "backend": "lexical", "unit": "sub_question", "seed": 3,
                                              "bootstrap": 20, "top_k": 5, "segments_file": segments_file()})
    run = GeometryRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("studies:geometry_run", args=[run.pk])
    assert run.n_items == 16 and run.seed == 3 and run.selection["source"] == "jsonl"
    assert run.analysis_state == "done"
    assert run.results["label"] == "lexical baseline, not semantic"
    page = reviewer_client.get(URL).content.decode()
    assert f"run #{run.pk}" in page and "lexical baseline, not semantic" in page


@pytest.mark.parametrize("data, message", [
    ({"kind": "geometry", "backend": "served"}, "A served model needs an endpoint."),
    ({"kind": "surprisal", "backend": "lexical"}, "A served model needs an endpoint."),
    ({"kind": "geometry", "backend": "lexical", "sources": ["human", "synthetic"]}, "No error segment in this selection"),
    ({"kind": "geometry", "backend": "lexical", "segments_file": "bad"}, "Line 1: not JSON"),
])
def test_bad_input_is_refused_and_starts_nothing(reviewer_client, data, message):
    data = {"unit": "sub_question", "seed": 1, "bootstrap": 10, "top_k": 5, **data}
    if data.get("segments_file") == "bad":
        data["segments_file"] = segments_file(["{not json"])
    response = reviewer_client.post(URL, data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not GeometryRun.objects.exists()


def test_a_served_study_is_queued_on_the_endpoint(reviewer_client, endpoint, llm_server, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(URL, {"kind": "geometry", "backend": "served", "endpoint": endpoint.pk, "model": "embed-x",
                                   "unit": "sub_question", "seed": 1, "bootstrap": 0, "top_k": 5,
                                   "segments_file": segments_file()})
    run = GeometryRun.objects.get()
    assert run.status == "done" and run.analysis_state == "done", run.analysis_error
    assert run.results["model"] == "embed-x"
    assert sum(len(r.payload["input"]) for r in llm_server.requests) == 16


def test_groups_chosen_on_the_page(reviewer_client, django_capture_on_commit_callbacks):
    from tests.factories import make_question
    from tests.studies.test_geometry_probe_segments import TEXT, derive
    from tests.studies.test_geometry_runs import answer

    question = make_question()
    for i in range(3):
        derive(answer(question, f"s{i}", TEXT.replace("found", f"found {i}"), 10, {"(1)": 5, "(2)": 5}), "drop-final-answer")
    page = reviewer_client.get(URL).content.decode()
    assert 'value="probe-derived"' in page and 'name="logprobs_shape"' in page
    base = {"kind": "geometry", "backend": "lexical", "unit": "sub_question", "seed": 1, "bootstrap": 0, "top_k": 5}
    response = reviewer_client.post(URL, base)  # no group, no file
    assert response.status_code == 200 and "Choose at least one group." in response.content.decode()
    assert not GeometryRun.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(URL, {**base, "sources": ["probe-derived"]})
    run = GeometryRun.objects.get()
    assert run.selection["sources"] == ["probe-derived"] and run.n_items == 3
    assert set(run.items.values_list("subset", flat=True)) == {"probe-derived"}
    assert run.analysis_state == "done" and list(run.results["groups"]) == ["probe-derived"]


def _bundle_upload(name, as_name=None):
    from tests.conftest import ROOT

    raw = (ROOT / "fixtures" / "realmath_eval_full" / "error_segment_bundle" / name).read_bytes()
    return SimpleUploadedFile(as_name or name, raw, content_type="application/x-ndjson")


def test_the_paper_bundle_as_released_in_one_upload(reviewer_client):
    """Issue 34: both released segment files at once, the group from each file's name: 606 segments."""
    response = reviewer_client.post(URL, {"kind": "geometry", "backend": "lexical", "unit": "sub_question", "seed": 42,
                                          "bootstrap": 0, "top_k": 5, "limit": "",
                                          "segments_file": [_bundle_upload("human_error_segments.jsonl"),
                                                            _bundle_upload("llm_error_segments.jsonl")]})
    run = GeometryRun.objects.get()
    assert response.status_code == 302 and run.n_items == 606
    assert (run.items.filter(subset="human").count(), run.items.filter(subset="synthetic").count()) == (278, 328)


def test_a_bundle_file_of_another_name_needs_its_group_in_english_and_chinese(reviewer_client):
    data = {"kind": "geometry", "backend": "lexical", "unit": "sub_question", "seed": 42, "bootstrap": 0, "top_k": 5}
    page = reviewer_client.post(URL, {**data, "segments_file": _bundle_upload("human_error_segments.jsonl", "a.jsonl")})
    assert "a.jsonl: Line 1: no group (analysis_subset): give it with --segments-group" in page.content.decode()
    assert not GeometryRun.objects.exists()
    reviewer_client.cookies["django_language"] = "zh-hans"
    page = reviewer_client.post(URL, {**data, "segments_file": _bundle_upload("human_error_segments.jsonl", "a.jsonl")})
    text = page.content.decode()
    assert "第 1 行：没有组别（analysis_subset）" in text and "文件中片段的组别" in text
    reviewer_client.post(URL, {**data, "segments_group": "human",
                               "segments_file": _bundle_upload("human_error_segments.jsonl", "a.jsonl")})
    assert GeometryRun.objects.get().n_items == 278
