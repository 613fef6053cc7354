"""The Validity view's part of the full export (see annotation.export.sections): the random draws of
answers sent to the experts (`GoldDraw`), so that a gold subset can still be shown to be random, and
drawn again, in the database a file is imported into.

Each draw is a global line (after the judge settings: it names its setting by name and version) with
its purpose, seed, the selection it was drawn from (as recorded, database ids included), how many
labels it asked per answer, who drew it and when, and `drawn`: how many answers it picked. Each
response line of an answer a draw picked carries `gold_draws`, the keys of those draws; on import the
answer joins its draw again (answers are named by their lines, never by database ids). A draw's key
is a digest of its setting, purpose, seed and time, so a file exported again after an import is the
same file, and a draw imported twice is one draw.
"""
import hashlib
import json
from datetime import datetime

from django.utils.translation import gettext

from annotation.export.load import TIME, UserRef, user_named, whole
from annotation.importers.checks import ListOf, Obj, Refused, Value, text
from grading.models import JudgeResult, JudgeSetting

from .models import GoldDraw

GLOBAL_TYPES = {"gold_draw"}
FIELDS = ["purpose", "seed", "selection", "labels_per_answer"]
KEY_LENGTH = 16


def draw_key(setting_name, setting_version, purpose, seed, created):
    """The key a draw is named by in a file: the same draw gives the same key in any database."""
    text_ = json.dumps([setting_name, setting_version, purpose, seed, created], ensure_ascii=False)
    return hashlib.sha256(text_.encode("utf-8")).hexdigest()[:KEY_LENGTH]


def _key(draw):
    return draw_key(draw.setting.name, draw.setting.version, draw.purpose, draw.seed, draw.created.isoformat())


def _picked(response_ids):
    """{draw: [answer ids]}: the answers among `response_ids` each draw picked that carry a result of the
    draw's setting (so the setting travels with them: grading.exchange). Draws are made from answers the
    setting scored, so this leaves out only what lost its results."""
    scored = set()
    for start in range(0, len(response_ids), 500):
        scored.update(JudgeResult.objects.filter(response_id__in=response_ids[start : start + 500])
                      .values_list("response_id", "setting_id").distinct())
    settings_ = {setting_id for _, setting_id in scored}
    picked = {}
    for draw in GoldDraw.objects.filter(setting_id__in=settings_).select_related("setting", "created_by").order_by(
            "created", "id"):
        answers = sorted(r for r in set(draw.response_ids) if (r, draw.setting_id) in scored)
        if answers:
            picked[draw] = answers
    return picked


def _ids(response_ids):
    if hasattr(response_ids, "values_list"):  # a queryset of answers (referenced_usernames)
        return list(response_ids.values_list("pk", flat=True))
    return list(response_ids)


def referenced_usernames(response_ids):
    return {draw.created_by.username for draw in _picked(_ids(response_ids)) if draw.created_by}


def export_global(response_ids):
    for draw in _picked(_ids(response_ids)):
        yield {
            "type": "gold_draw", "key": _key(draw), "setting": [draw.setting.name, draw.setting.version],
            **{f: getattr(draw, f) for f in FIELDS}, "drawn": len(draw.response_ids),
            "created_by": draw.created_by.username if draw.created_by else None, "created": draw.created.isoformat(),
        }


def export_responses(response_ids):
    sections = {}
    for draw, answers in _picked(_ids(response_ids)).items():
        for response_id in answers:
            sections.setdefault(response_id, {"gold_draws": []})["gold_draws"].append(_key(draw))
    for section in sections.values():
        section["gold_draws"].sort()
    return sections


# --- import ---------------------------------------------------------------------------------

def _pair(value):
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
            and isinstance(value[1], int) and not isinstance(value[1], bool)):
        raise ValueError(gettext("must be [setting name, version]"))


def global_shapes():
    return {"gold_draw": Obj(
        GoldDraw, FIELDS,
        shapes={"key": text(KEY_LENGTH), "setting": Value(_pair, null=False), "drawn": whole(0),
                "created_by": UserRef(), "created": TIME},
        required=["key", "setting", "seed", "created"],
    )}


def response_shapes():
    return {"gold_draws": ListOf(text(KEY_LENGTH), unique=lambda key: key)}


def note_line(line, kind, number, context):
    """Remember the settings and draws the file defines, and the draws its answers name."""
    mine = context.setdefault("validity", {"settings": set(), "draws": set(), "wanted": {}})
    if kind == "judge_config":
        mine["settings"].add((line["name"], line["version"]))
    elif kind == "gold_draw":
        if line["key"] in mine["draws"]:
            raise Refused("key", gettext("repeats the key of an earlier draw"))
        mine["draws"].add(line["key"])
        setting = tuple(line["setting"])
        if setting not in mine["settings"]:
            mine["wanted"].setdefault(("setting", setting), (number, "setting"))
    elif kind == "response":
        for index, key in enumerate(line.get("gold_draws") or []):
            if key not in mine["draws"]:
                raise Refused(f"gold_draws[{index}]", gettext("names a draw %(key)s that no earlier line defines")
                              % {"key": repr(key)})


def check_references(context, user):
    """(line, field, problem) for each setting a draw names that is neither in the file nor here."""
    wanted = context.get("validity", {}).get("wanted", {})
    found = set(JudgeSetting.objects.filter(name__in={name for _, (name, _v) in wanted}).values_list("name", "version"))
    return [(*where, gettext("names an unknown setting %(name)s v%(version)s") % {"name": key[0], "version": key[1]})
            for (_, key), where in wanted.items() if key not in found]


def import_global(line, context):
    setting = JudgeSetting.objects.get(name=line["setting"][0], version=line["setting"][1])
    created = datetime.fromisoformat(line["created"])
    draw = GoldDraw.objects.filter(setting=setting, purpose=line.get("purpose", GoldDraw.Purpose.GOLDS),
                                   seed=line["seed"], created=created).first()
    if draw is None:  # imported once: the same draw, not a second one
        draw = GoldDraw.objects.create(setting=setting, **{f: line[f] for f in FIELDS if f in line}, response_ids=[],
                                       created_by=user_named(context, line.get("created_by")))
        GoldDraw.objects.filter(pk=draw.pk).update(created=created)
    context.setdefault("gold_draws", {})[line["key"]] = draw.pk


def import_response(response, line, context):
    for key in line.get("gold_draws") or []:
        draw = GoldDraw.objects.get(pk=context["gold_draws"][key])
        if response.pk not in draw.response_ids:
            GoldDraw.objects.filter(pk=draw.pk).update(response_ids=sorted([*draw.response_ids, response.pk]))


__all__ = ["GLOBAL_TYPES", "check_references", "draw_key", "export_global", "export_responses", "global_shapes",
           "import_global", "import_response", "note_line", "referenced_usernames", "response_shapes"]
