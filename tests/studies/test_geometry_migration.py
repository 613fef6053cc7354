"""Migrations 0015 (GeometryRun on AbstractRun) and 0016 (probe-derived segments) keep every row."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("grading", "0014_endpoint_limits_learned_from_provider")


def test_existing_geometry_runs_and_segments_survive_the_migrations():
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    old = executor.loader.project_state([BEFORE]).apps
    run = old.get_model("grading", "GeometryRun").objects.create(
        kind="geometry", backend="lexical", status="done", epoch=3, n_items=1, chunk_size=64, analysis_state="done",
        results={"study": "error_geometry"}, seed=7)
    old.get_model("grading", "GeometrySegment").objects.create(
        run_id=run.pk, sample_id="s1", question_key="q", subset="human", text="x = 2", text_hash="h", state="ok")
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from studies.geometry.models import GeometryRun

    again = GeometryRun.objects.get(pk=run.pk)
    assert (again.status, again.epoch, again.n_items, again.chunk_size, again.seed) == ("done", 3, 1, 64, 7)
    assert again.results == {"study": "error_geometry"} and again.analysis_state == "done"
    segment = again.items.get()
    assert (segment.text, segment.subset, segment.probe) == ("x = 2", "human", "")
