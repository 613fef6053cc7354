"""Flat tables for analysis (CSV and Parquet): the queries.

Each table is one SQL query: the database does the joins, the per-response counts and the
ordering (responses by id, then each table's own order); writers.py streams its rows from a
cursor (server-side on PostgreSQL) into Arrow record batches of a bounded size, so memory
depends on the batch size, not on the number of responses. A response is named in every table by
`response_key` (question key prefix and student id) plus its question location and source,
so tables join without database ids.

Other apps add tables with a `flat_tables(responses)` function in their exchange module
(see sections.py) returning `FlatTable`s built with `key_columns` below.
"""
from dataclasses import dataclass

from django.db.models import Case, CharField, Count, F, FloatField, IntegerField, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Cast, Coalesce, Concat, Substr

from ..models import Adjudication, Label, Response, StepLabel
from .sections import section_modules

KEY_COLUMNS = [("response_key", "string"), ("question_location", "string"), ("source", "string")]


@dataclass
class FlatTable:
    """One table: typed columns and a values_list query giving them in order, then the response id."""

    name: str
    columns: list
    queryset: object


def key_columns(prefix=""):
    """Expressions of the key columns for a model reached from Response by `prefix` ("" or "response__")."""
    return [
        Concat(Substr(f"{prefix}question__statement_hash", 1, 12), Value("/"), f"{prefix}student_id",
               output_field=CharField()),
        F(f"{prefix}question__location"),
        F(f"{prefix}source"),
    ]


def as_float(name):
    return Cast(name, FloatField())


def _rater(prefix=""):
    return Case(When(**{f"{prefix}is_imported": True}, then=Value("imported")),
                default=F(f"{prefix}annotator__username"), output_field=CharField())


def _label_order(prefix=""):
    return [f"{prefix}response_id", f"{prefix}is_imported", f"{prefix}annotator__username", f"{prefix}id"]


def core_tables(responses):
    """The tables of the annotation app for the responses in a queryset."""
    selected = responses.values("pk")
    n_labels = Subquery(
        Label.objects.filter(response=OuterRef("pk")).order_by().values("response").annotate(n=Count("*")).values("n"),
        output_field=IntegerField(),
    )
    chosen_here = Q(chosen_label__response=F("response"))
    chosen = Case(
        When(chosen_here & Q(chosen_label__is_imported=True), then=Value("imported")),
        When(chosen_here, then=F("chosen_label__annotator__username")),
        default=None, output_field=CharField(),
    )
    return [
        FlatTable("responses", KEY_COLUMNS + [
            ("question_key", "string"), ("level", "string"), ("full_score", "float"), ("student_id", "string"),
            ("generator_model", "string"), ("generator_temperature", "float"), ("status", "string"),
            ("gold_score", "float"), ("gold_status", "string"), ("n_annotations", "int"), ("transcript", "string"),
        ], Response.objects.filter(pk__in=selected).order_by("id").values_list(
            *key_columns(), "question__statement_hash", "question__level", as_float("question__full_score"),
            "student_id", "generator_model", "generator_temperature", "status", as_float("gold_score"), "gold_status",
            Coalesce(n_labels, 0), "transcript", "id",
        )),
        FlatTable("annotations", KEY_COLUMNS + [
            ("rater", "string"), ("is_imported", "bool"), ("total", "float"), ("sub_scores", "json"),
            ("submitted", "bool"), ("submitted_at", "time"), ("version", "int"), ("comment", "string"),
            ("active_seconds", "int"),
        ], Label.objects.filter(response__in=selected).order_by(*_label_order()).values_list(
            *key_columns("response__"), _rater(), "is_imported", as_float("total"), "sub_scores", "submitted",
            "submitted_at", "version", "comment", "active_seconds", "response_id",
        )),
        FlatTable("step_labels", KEY_COLUMNS + [
            ("rater", "string"), ("checkpoint", "int"), ("sub_question", "string"), ("start", "int"), ("end", "int"),
            ("verdict", "string"), ("awarded_points", "float"), ("quote", "string"), ("comment", "string"),
        ], StepLabel.objects.filter(label__response__in=selected).order_by(
            *_label_order("label__"), "start", "id"
        ).values_list(
            *key_columns("label__response__"), _rater("label__"), "checkpoint__order", "sub_question__label",
            "start", "end", "verdict", as_float("awarded_points"), "quote", "comment", "label__response_id",
        )),
        FlatTable("adjudications", KEY_COLUMNS + [
            ("reviewer", "string"), ("gold_score", "float"), ("chosen", "string"), ("reason", "string"),
            ("created", "time"),
        ], Adjudication.objects.filter(response__in=selected).order_by("response_id", "created", "id").values_list(
            *key_columns("response__"), "reviewer__username", as_float("gold_score"), chosen, "reason", "created",
            "response_id",
        )),
    ]


def flat_tables(responses):
    """Every table of the export: ours, then those of the other apps' exchange modules."""
    tables = core_tables(responses)
    for module in section_modules():
        if hasattr(module, "flat_tables"):
            tables.extend(module.flat_tables(responses))
    return tables
