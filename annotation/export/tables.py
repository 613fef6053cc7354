"""Flat tables for analysis (CSV and Parquet), built from the full export's response lines.

Each table has a fixed, typed column list so that chunks written one after another share
one schema. A response is named in every table by `response_key` (question key prefix and
student id) plus its question location and source, so tables join without database ids.
Sections of other apps (lists of objects in a response line, e.g. judge results) become
tables of their own: with the columns of `<app>.exchange.FLAT_COLUMNS` and rows from its
`flat_rows(items)` when given, else every field as text (JSON for nested values).
"""
import json

from .sections import section_modules

KEY_COLUMNS = [("response_key", "string"), ("question_location", "string"), ("source", "string")]

CORE_TABLES = {
    "responses": KEY_COLUMNS + [
        ("question_key", "string"), ("level", "string"), ("full_score", "float"), ("student_id", "string"),
        ("generator_model", "string"), ("generator_temperature", "float"), ("status", "string"),
        ("gold_score", "float"), ("gold_status", "string"), ("n_annotations", "int"), ("transcript", "string"),
    ],
    "annotations": KEY_COLUMNS + [
        ("rater", "string"), ("is_imported", "bool"), ("total", "float"), ("sub_scores", "string"),
        ("submitted", "bool"), ("submitted_at", "string"), ("version", "int"), ("comment", "string"),
        ("active_seconds", "int"),
    ],
    "step_labels": KEY_COLUMNS + [
        ("rater", "string"), ("checkpoint", "int"), ("sub_question", "string"), ("start", "int"), ("end", "int"),
        ("verdict", "string"), ("awarded_points", "float"), ("quote", "string"), ("comment", "string"),
    ],
    "adjudications": KEY_COLUMNS + [
        ("reviewer", "string"), ("gold_score", "float"), ("chosen", "string"), ("reason", "string"), ("created", "string"),
    ],
}
CORE_SECTIONS = {"annotations", "adjudications", "assignments"}


def _float(value):
    return None if value is None or value == "" else float(value)


def response_key(line):
    return f"{line['question'][:12]}/{line['student_id']}"


class TableBuilder:
    """Turns response lines (and the questions before them) into typed rows per table."""

    def __init__(self):
        self.questions = {}
        self.columns = dict(CORE_TABLES)
        self.flatteners = {}
        for module in section_modules():
            self.columns.update(getattr(module, "FLAT_COLUMNS", {}))
            for table in getattr(module, "FLAT_COLUMNS", {}):
                if hasattr(module, "flat_rows"):
                    self.flatteners[table] = module.flat_rows

    def add_question(self, line):
        self.questions[line["key"]] = line

    def rows(self, line):
        question = self.questions.get(line["question"], {})
        key = {"response_key": response_key(line), "question_location": question.get("location", ""), "source": line["source"]}
        tables = {name: [] for name in self.columns}
        tables["responses"].append({
            **key, "question_key": line["question"], "level": question.get("level", ""),
            "full_score": _float(question.get("full_score")), "student_id": line["student_id"],
            "generator_model": line.get("generator_model", ""), "generator_temperature": line.get("generator_temperature"),
            "status": line.get("status"), "gold_score": _float(line.get("gold_score")),
            "gold_status": line.get("gold_status"), "n_annotations": len(line.get("annotations", [])),
            "transcript": line["transcript"],
        })
        for annotation in line.get("annotations", []):
            rater = "imported" if annotation.get("is_imported") else annotation.get("annotator")
            tables["annotations"].append({
                **key, "rater": rater, "is_imported": bool(annotation.get("is_imported")),
                "total": _float(annotation.get("total")), "sub_scores": json.dumps(annotation.get("sub_scores"), ensure_ascii=False),
                "submitted": bool(annotation.get("submitted")), "submitted_at": annotation.get("submitted_at"),
                "version": annotation.get("version"), "comment": annotation.get("comment", ""),
                "active_seconds": annotation.get("active_seconds", 0),
            })
            for step in annotation.get("step_labels", []):
                tables["step_labels"].append({
                    **key, "rater": rater, "checkpoint": step.get("checkpoint"), "sub_question": step.get("sub_question"),
                    "start": step.get("start"), "end": step.get("end"), "verdict": step.get("verdict"),
                    "awarded_points": _float(step.get("awarded_points")), "quote": step.get("quote", ""),
                    "comment": step.get("comment", ""),
                })
        for adjudication in line.get("adjudications", []):
            tables["adjudications"].append({
                **key, "reviewer": adjudication.get("reviewer"), "gold_score": _float(adjudication.get("gold_score")),
                "chosen": adjudication.get("chosen"), "reason": adjudication.get("reason", ""),
                "created": adjudication.get("created"),
            })
        for section, items in line.items():
            if section in CORE_SECTIONS or not isinstance(items, list) or not items or not isinstance(items[0], dict):
                continue
            flatten = self.flatteners.get(section)
            rows = flatten(items) if flatten else [{k: self._cell(v) for k, v in item.items()} for item in items]
            tables.setdefault(section, []).extend({**key, **row} for row in rows)
        return tables

    @staticmethod
    def _cell(value):
        return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, (dict, list)) else value

    def columns_for(self, table, first_row):
        if table in self.columns:
            return self.columns[table]
        return KEY_COLUMNS + [(name, "string") for name in first_row if name not in dict(KEY_COLUMNS)]
