"""The grading app's part of the full export (see annotation.export.sections).

Judge endpoints and settings are global lines; each response line carries its judge results,
each with the setting it names by (name, version), its meta-evaluation (with the LLM's
proposals) and the experts' verdict on it when it is a step judge. Keys are never exported:
an endpoint only names the environment variable that holds its key.
"""
from datetime import datetime
from decimal import Decimal

from django.db.models import Prefetch, Value
from django.db.models.functions import NullIf
from django.utils.translation import gettext

from annotation.export.full import decode_json_fields, json_text
from annotation.export.load import SCORES, TIME, VERSION, UserRef, may_create, user_named, whole
from annotation.export.tables import KEY_COLUMNS, FlatTable, as_float, key_columns
from annotation.importers import ImportFormatError
from annotation.importers.checks import Column, ListOf, Obj, Refused, kind_of, text
from annotation.importers.checks import Value as Checked

from .models import JudgeResult, JudgeSetting, LlmEndpoint, MetaEvalProposal, MetaEvaluation, StepJudgeValidation

GLOBAL_TYPES = {"judge_endpoint", "judge_config"}
ENDPOINT_FIELDS = ["base_url", "api_key_env", "max_concurrency", "requests_per_minute", "tokens_per_minute",
                   "timeout_seconds", "max_attempts"]
SETTING_FIELDS = ["kind", "model", "temperature", "max_tokens", "reasoning_effort", "samples", "aggregate",
                 "system_prompt", "prompt_template", "extra_body", "parse_retries", "notes", "answer_tolerance",
                 "second_opinion", "approximate_answers",
                 # issue 27; the few-shot examples (answer ids of this database) are not exported
                 "strategy", "strategy_version", "few_shot_k", "split_rule", "few_shot_seed", "few_shot_comments",
                 "step_report"]  # issue 37
RESULT_FIELDS = ["cache_key", "status", "score", "spread", "rationale", "raw_output", "parse_status", "step_verdicts",
                 "samples", "prompt_tokens", "completion_tokens", "latency_ms", "attempts", "errors", "provenance",
                 "rubric_version", "sub_scores"]
JSON_RESULT_FIELDS = {"step_verdicts", "samples", "errors", "provenance", "sub_scores"}
PROPOSAL_FIELDS = ["model", "status", "category", "analysis", "is_ood", "data", "raw_output", "error", "errors",
                   "prompt_tokens", "completion_tokens", "latency_ms"]
META_FIELDS = ["category", "analysis", "is_ood", "direction", "judge_score", "gold_score", "proposed_by",
               "kept_proposal", "provenance", "version"]

def _stamp(value):
    return None if value is None else value.isoformat()


def _time(value):
    return datetime.fromisoformat(value) if value else None


def _settings_for(response_ids):
    setting_ids = set()
    for start in range(0, len(response_ids), 500):
        setting_ids.update(
            JudgeResult.objects.filter(response_id__in=response_ids[start : start + 500]).values_list("setting_id", flat=True)
        )
    # Earlier versions come along, so that each version's lineage survives the round trip.
    frontier = set(setting_ids)
    while frontier:
        frontier = set(
            JudgeSetting.objects.filter(id__in=frontier, previous__isnull=False).values_list("previous_id", flat=True)
        ) - setting_ids
        setting_ids |= frontier
    return JudgeSetting.objects.filter(id__in=setting_ids).select_related("endpoint", "previous").order_by("name", "version")


def referenced_usernames(response_ids):
    names = set(MetaEvaluation.objects.filter(result__response_id__in=response_ids).values_list("confirmed_by__username", flat=True))
    names.update(StepJudgeValidation.objects.filter(result__response_id__in=response_ids).values_list("validated_by__username", flat=True))
    return names


def export_global(response_ids):
    judge_settings = list(_settings_for(response_ids))
    endpoints = sorted({c.endpoint for c in judge_settings if c.endpoint}, key=lambda e: e.name)
    for endpoint in endpoints:
        yield {"type": "judge_endpoint", "name": endpoint.name, **{f: getattr(endpoint, f) for f in ENDPOINT_FIELDS}}
    for setting in judge_settings:
        yield {
            "type": "judge_config",
            "name": setting.name,
            "version": setting.version,
            "endpoint": setting.endpoint.name if setting.endpoint else None,
            **{f: getattr(setting, f) for f in SETTING_FIELDS},
            "price_input_per_1k": str(setting.price_input_per_1k),
            "price_output_per_1k": str(setting.price_output_per_1k),
            "previous": [setting.previous.name, setting.previous.version] if setting.previous else None,
            "created": _stamp(setting.created),
        }


def _meta_line(meta):
    if meta is None:
        return None
    return {
        **{f: getattr(meta, f) for f in META_FIELDS},
        "confirmed_by": meta.confirmed_by.username if meta.confirmed_by else None,
        "confirmed_at": _stamp(meta.confirmed_at),
        "proposals": [
            {**{f: getattr(p, f) for f in PROPOSAL_FIELDS}, "created": _stamp(p.created),
             "shown": meta.proposal_id == p.pk}
            for p in meta.proposals.all()
        ],
    }


def _result_line(row, meta, validation):
    return {
        "config": row["setting__name"],
        "config_version": row["setting__version"],
        **{f: row[f] for f in RESULT_FIELDS},
        "cost": str(row["cost"]),
        "finished": _stamp(row["finished"]),
        "meta_evaluation": _meta_line(meta),
        "validation": None if validation is None else {
            "judge_says_pass": validation.judge_says_pass, "verdict_right": validation.verdict_right,
            "note": validation.note, "validated_by": validation.validated_by.username,
        },
    }


def export_responses(response_ids):
    # Results come as plain rows (there are many; model instances cost more than the rest of the
    # export); their meta-evaluations and validations, which are few, as objects.

    json_fields = [f for f in RESULT_FIELDS if f in JSON_RESULT_FIELDS]
    rows = (
        JudgeResult.objects.filter(response_id__in=response_ids)
        .exclude(status=JudgeResult.Status.RUNNING)
        .order_by("response_id", "setting__name", "setting__version", "cache_key")
        .values("id", "response_id", "setting__name", "setting__version", "cost", "finished",
                *[f for f in RESULT_FIELDS if f not in json_fields], **json_text(*json_fields))
    )
    metas = {
        meta.result_id: meta
        for meta in MetaEvaluation.objects.filter(result__response_id__in=response_ids)
        .select_related("confirmed_by")
        .prefetch_related(Prefetch("proposals", queryset=MetaEvalProposal.objects.order_by("id")))
    }
    validations = {
        validation.result_id: validation
        for validation in StepJudgeValidation.objects.filter(result__response_id__in=response_ids).select_related("validated_by")
    }
    sections = {response_id: {"judge_results": []} for response_id in response_ids}
    for row in decode_json_fields(rows.iterator(chunk_size=2000), json_fields):
        line = _result_line(row, metas.get(row["id"]), validations.get(row["id"]))
        sections[row["response_id"]]["judge_results"].append(line)
    return sections


def flat_tables(responses):
    """The judge_results table of the flat exports (one SQL query; see annotation.export.tables)."""
    rows = (
        JudgeResult.objects.filter(response__in=responses.values("pk"))
        .exclude(status=JudgeResult.Status.RUNNING)
        .order_by("response_id", "setting__name", "setting__version", "cache_key")
        .values_list(
            *key_columns("response__"), "setting__name", "setting__version", "status", "score", "spread", "parse_status",
            "prompt_tokens", "completion_tokens", as_float("cost"), "latency_ms", "attempts",
            NullIf("meta_evaluation__category", Value("")), NullIf("meta_evaluation__direction", Value("")),
            "validation__verdict_right", "rationale", "response_id",
        )
    )
    columns = KEY_COLUMNS + [
        ("config", "string"), ("config_version", "int"), ("status", "string"), ("score", "float"),
        ("spread", "float"), ("parse_status", "string"), ("prompt_tokens", "int"), ("completion_tokens", "int"),
        ("cost", "float"), ("latency_ms", "int"), ("attempts", "int"), ("meta_category", "string"),
        ("meta_direction", "string"), ("validation_right", "bool"), ("rationale", "string"),
    ]
    return [FlatTable("judge_results", columns, rows)]


# --- import ---------------------------------------------------------------------------------

def _pair(value):
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
            and isinstance(value[1], int) and not isinstance(value[1], bool)):
        raise ValueError("must be [setting name, version]")


def global_shapes():
    endpoint = Obj(LlmEndpoint, ["name", *ENDPOINT_FIELDS], required=["name"])
    setting = Obj(
        JudgeSetting, [*SETTING_FIELDS, "price_input_per_1k", "price_output_per_1k"],
        shapes={"name": Column(JudgeSetting, "name"), "version": whole(1, null=False),
                "endpoint": Column(LlmEndpoint, "name", null=True), "previous": Checked(_pair), "created": TIME},
        required=["name", "version"],
    )
    return {"judge_endpoint": endpoint, "judge_config": setting}


def response_shapes():
    proposal = Obj(MetaEvalProposal, PROPOSAL_FIELDS, shapes={"created": TIME, "shown": kind_of(bool, label="true or false")})
    meta = Obj(MetaEvaluation, META_FIELDS, shapes={"confirmed_by": UserRef(), "confirmed_at": TIME,
                                                    "proposals": ListOf(proposal)}, null=True)
    validation = Obj(StepJudgeValidation, ["judge_says_pass", "verdict_right", "note"],
                     shapes={"validated_by": UserRef(null=False)},
                     required=["judge_says_pass", "verdict_right", "validated_by"], null=True)
    result = Obj(
        JudgeResult, [f for f in RESULT_FIELDS if f not in ("rubric_version", "sub_scores")] + ["cost", "finished"],
        shapes={"config": text(100), "config_version": VERSION, "rubric_version": whole(1), "sub_scores": SCORES,
                "meta_evaluation": meta, "validation": validation},
        required=["config", "config_version"],
    )
    return {"judge_results": ListOf(result, unique=lambda r: (r.get("config"), r.get("config_version"), r.get("cache_key")))}


def line_scores(line):
    """(path, value, capped) of the judge scores of a response line and of what its
    meta-evaluations copied: none negative, and judge scores no more than the question's full score
    (annotation.export.load checks them; a copied gold follows its response's gold)."""
    for index, data in enumerate(line.get("judge_results") or []):
        yield f"judge_results[{index}].score", data.get("score"), True
        meta = data.get("meta_evaluation") or {}
        yield f"judge_results[{index}].meta_evaluation.judge_score", meta.get("judge_score"), True
        yield f"judge_results[{index}].meta_evaluation.gold_score", meta.get("gold_score"), False


def note_line(line, kind, number, context):
    """Remember the endpoints and settings the file defines and those its lines name; a
    reviewer's import may name an endpoint only as it already is here (only admins create them)."""
    defined, wanted = context.setdefault("defined", set()), context.setdefault("wanted", {})
    if kind == "judge_endpoint":
        if not may_create(context):
            _refuse_new_endpoint(line)
        defined.add(("endpoint", line["name"]))
    elif kind == "judge_config":
        if line.get("endpoint") and ("endpoint", line["endpoint"]) not in defined:
            wanted.setdefault(("endpoint", line["endpoint"]), (number, "endpoint"))
        if line.get("previous") and ("setting", tuple(line["previous"])) not in defined:
            wanted.setdefault(("setting", tuple(line["previous"])), (number, "previous"))
        defined.add(("setting", (line["name"], line["version"])))
    elif kind == "response":
        for index, data in enumerate(line.get("judge_results") or []):
            key = ("setting", (data["config"], data["config_version"]))
            if key not in defined:
                wanted.setdefault(key, (number, f"judge_results[{index}].config"))


def _refuse_new_endpoint(line):
    existing = LlmEndpoint.objects.filter(name=line["name"]).first()
    if existing is None:
        raise Refused("name", gettext(
            "the file defines a judge endpoint %(name)s; only an admin may create endpoints (they say where the "
            "server's API keys are sent): ask an admin to import this file, or to create the endpoint first")
            % {"name": repr(line["name"])})
    for field in ("base_url", "api_key_env"):
        if field in line and line[field] != getattr(existing, field):
            raise Refused(field, gettext("differs from the endpoint %(name)s here; only an admin may change endpoints")
                          % {"name": repr(existing.name)})


def check_references(context, user):
    """(line, field, problem) for each endpoint or setting named but neither in the file nor here."""
    wanted = context.get("wanted", {})
    endpoints = {name for kind, name in wanted if kind == "endpoint"}
    settings_ = {key for kind, key in wanted if kind == "setting"}
    found_endpoints = set(LlmEndpoint.objects.filter(name__in=endpoints).values_list("name", flat=True))
    found_settings = set(
        JudgeSetting.objects.filter(name__in={name for name, _ in settings_}).values_list("name", "version")
    )
    problems = [(*wanted[("endpoint", name)], gettext("names an unknown judge endpoint %(name)s") % {"name": repr(name)})
                for name in endpoints - found_endpoints]
    problems += [(*wanted[("setting", key)], gettext("names an unknown setting %(name)s v%(version)s") % {"name": key[0], "version": key[1]})
                 for key in settings_ - found_settings]
    return problems


def import_global(line, context):
    if line["type"] == "judge_endpoint":
        endpoint, _ = LlmEndpoint.objects.get_or_create(
            name=line["name"], defaults={f: line[f] for f in ENDPOINT_FIELDS if f in line}
        )
        context.setdefault("endpoints", {})[endpoint.name] = endpoint
        return
    judge_settings = context.setdefault("judge_settings", {})
    previous = judge_settings.get(tuple(line["previous"])) if line.get("previous") else None
    endpoint = context.get("endpoints", {}).get(line.get("endpoint")) if line.get("endpoint") else None
    setting, created = JudgeSetting.objects.get_or_create(
        name=line["name"], version=line["version"],
        defaults={
            **{f: line[f] for f in SETTING_FIELDS if f in line},
            "endpoint": endpoint, "previous": previous,
            "price_input_per_1k": Decimal(line.get("price_input_per_1k", "0")),
            "price_output_per_1k": Decimal(line.get("price_output_per_1k", "0")),
        },
    )
    if created and line.get("created"):
        JudgeSetting.objects.filter(pk=setting.pk).update(created=_time(line["created"]))
    judge_settings[(setting.name, setting.version)] = setting


def _import_meta(result, data, context):
    meta = MetaEvaluation.objects.create(
        result=result, **{f: data[f] for f in META_FIELDS if f in data},
        confirmed_by=user_named(context, data.get("confirmed_by")), confirmed_at=_time(data.get("confirmed_at")),
    )
    for proposal_data in data.get("proposals", []):
        proposal = MetaEvalProposal.objects.create(
            meta_evaluation=meta, **{f: proposal_data[f] for f in PROPOSAL_FIELDS if f in proposal_data}
        )
        if proposal_data.get("created"):
            MetaEvalProposal.objects.filter(pk=proposal.pk).update(created=_time(proposal_data["created"]))
        if proposal_data.get("shown"):
            MetaEvaluation.objects.filter(pk=meta.pk).update(proposal=proposal)


def import_response(response, line, context):
    judge_settings = context.setdefault("judge_settings", {})
    for data in line.get("judge_results", []):
        key = (data["config"], data["config_version"])
        setting = judge_settings.get(key) or JudgeSetting.objects.filter(name=key[0], version=key[1]).first()
        if setting is None:
            raise ImportFormatError(gettext("line %(number)s: judge result names an unknown setting %(name)s v%(version)s.")
                                    % {"number": line["_line"], "name": key[0], "version": key[1]})
        result = JudgeResult.objects.create(
            setting=setting, response=response, **{f: data[f] for f in RESULT_FIELDS if f in data},
            cost=Decimal(data.get("cost", "0")), finished=_time(data.get("finished")),
        )
        if data.get("meta_evaluation"):
            _import_meta(result, data["meta_evaluation"], context)
        if data.get("validation"):
            validation = data["validation"]
            StepJudgeValidation.objects.create(
                result=result, judge_says_pass=validation["judge_says_pass"], verdict_right=validation["verdict_right"],
                note=validation.get("note", ""), validated_by=user_named(context, validation["validated_by"]),
            )
