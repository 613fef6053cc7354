"""The flat tables as the first version of the export built them: from the full JSONL lines.

A reference for tests only. The export now reads each table straight from the database; these
tables, derived independently from the full export, must hold the same rows and values.
"""
import json

KEY = ["response_key", "question_location", "source"]
CORE_SECTIONS = {"annotations", "adjudications", "assignments"}


def _float(value):
    return None if value is None or value == "" else float(value)


def _judge_rows(results):
    rows = []
    for result in results:
        meta = result.get("meta_evaluation") or {}
        validation = result.get("validation") or {}
        rows.append({
            "config": result["config"], "config_version": result["config_version"], "status": result["status"],
            "score": result["score"], "spread": result["spread"], "parse_status": result["parse_status"],
            "prompt_tokens": result["prompt_tokens"], "completion_tokens": result["completion_tokens"],
            "cost": float(result["cost"]), "latency_ms": result["latency_ms"], "attempts": result["attempts"],
            "meta_category": meta.get("category") or None, "meta_direction": meta.get("direction") or None,
            "validation_right": validation.get("verdict_right"), "rationale": result["rationale"],
        })
    return rows


def tables_from_full_lines(lines):
    """{table: [row dict, ...]} from the lines of a full JSONL export (tables with rows only)."""
    questions, tables = {}, {}
    for line in lines:
        if line["type"] == "question":
            questions[line["key"]] = line
        if line["type"] != "response":
            continue
        question = questions.get(line["question"], {})
        key = {"response_key": f"{line['question'][:12]}/{line['student_id']}",
               "question_location": question.get("location", ""), "source": line["source"]}
        tables.setdefault("responses", []).append({
            **key, "question_key": line["question"], "level": question.get("level", ""),
            "full_score": _float(question.get("full_score")), "student_id": line["student_id"],
            "generator_model": line.get("generator_model", ""), "generator_temperature": line.get("generator_temperature"),
            "status": line.get("status"), "gold_score": _float(line.get("gold_score")),
            "gold_status": line.get("gold_status"), "n_annotations": len(line.get("annotations", [])),
            "transcript": line["transcript"],
        })
        for label in line.get("annotations", []):
            rater = "imported" if label.get("is_imported") else label.get("annotator")
            tables.setdefault("annotations", []).append({
                **key, "rater": rater, "is_imported": bool(label.get("is_imported")),
                "total": _float(label.get("total")),
                "sub_scores": json.dumps(label.get("sub_scores"), ensure_ascii=False),
                "submitted": bool(label.get("submitted")), "submitted_at": label.get("submitted_at"),
                "version": label.get("version"), "comment": label.get("comment", ""),
                "active_seconds": label.get("active_seconds", 0),
            })
            for step in label.get("step_labels", []):
                tables.setdefault("step_labels", []).append({
                    **key, "rater": rater, "checkpoint": step.get("checkpoint"), "sub_question": step.get("sub_question"),
                    "start": step.get("start"), "end": step.get("end"), "verdict": step.get("verdict"),
                    "awarded_points": _float(step.get("awarded_points")), "quote": step.get("quote", ""),
                    "comment": step.get("comment", ""),
                })
        for adjudication in line.get("adjudications", []):
            tables.setdefault("adjudications", []).append({
                **key, "reviewer": adjudication.get("reviewer"), "gold_score": _float(adjudication.get("gold_score")),
                "chosen": adjudication.get("chosen"), "reason": adjudication.get("reason", ""),
                "created": adjudication.get("created"),
            })
        if line.get("judge_results"):
            tables.setdefault("judge_results", []).extend({**key, **row} for row in _judge_rows(line["judge_results"]))
    return tables
