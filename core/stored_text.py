"""Sentences the app writes into the database for people to read later (an upload's report, a
packet fix's summary), kept so that each reader reads them in her own language (issue 39).

A stored message is a list of parts; a part is {"text": msgid, "params": {...}} (the msgid an
English sentence marked with `gettext_noop` where it is written, so that makemessages finds it;
a parameter may itself be a list of parts) or {"raw": text} (text that is not the app's own
wording: a file name, a reason already written in its writer's language). `render` translates
each part in the active language when the message is shown; `english` gives the English
sentence, which the models keep beside the parts for the API, the exports and `str()`, and
which is all that rows written before the parts existed have (they are shown as they are).
"""
import functools
import re

from django.utils import translation
from django.utils.translation import gettext


def part(text: str, **params) -> dict:
    """One sentence of a message: `text` a msgid (marked with gettext_noop by the caller)."""
    return {"text": text, "params": params}


def raw(text: str) -> dict:
    """Text shown as it is in every language (data, or a reason already translated)."""
    return {"raw": str(text)}


def render(parts, fallback: str = "") -> str:
    """The message in the active language; `fallback` (the stored English) when there are no parts."""
    if not parts:
        return fallback
    if isinstance(parts, dict):
        parts = [parts]
    sentences = []
    for item in parts:
        if not isinstance(item, dict):
            sentences.append(str(item))
        elif "raw" in item:
            sentences.append(str(item["raw"]))
        else:
            params = {key: render(value) if isinstance(value, list | dict) else value
                      for key, value in (item.get("params") or {}).items()}
            text = str(item.get("text", ""))
            try:
                sentences.append(gettext(text) % params if params else gettext(text))
            except (KeyError, TypeError, ValueError):  # a translation that lost a placeholder
                sentences.append(text % params if params else text)
    return " ".join(s for s in sentences if s)


@functools.lru_cache(maxsize=256)
def _pattern(msgid: str) -> re.Pattern:
    """A msgid as a pattern over its English sentence: each %(name)s a named group."""
    escaped = re.escape(msgid)
    return re.compile(re.sub(r"%\\\(([a-z_]+)\\\)s", lambda m: f"(?P<{m.group(1)}>.+?)", escaped))


def translate_known(text: str, msgids) -> str:
    """`text` stored as an English sentence (a field kept in English, or a row written before its
    parts existed) with each sentence of `msgids` found in it put in the reader's language; any
    other text is left as it is."""
    if not text:
        return text
    for msgid in msgids:
        text = _pattern(msgid).sub(lambda m, msgid=msgid: gettext(msgid) % m.groupdict(), text)
    return text


def english(parts) -> str:
    """The message in English (stored beside the parts)."""
    with translation.override("en"):
        return render(parts)
