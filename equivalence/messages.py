"""Explanations as messages: a template and its parameters, so the app can translate them.

The library imports no Django and translates nothing. Every explanation, note, decisive item and
reading error is built as ``M("the labels differ: {shown}", shown=...)``: ``str(message)`` is the
English text (data: exports, JSON, the command line), :func:`as_data` the structure
``{"t": template, "p": {name: parameter}}`` that the app renders in the user's language
(``grading/judges/answer_check.py`` translates each template with gettext; parameters that are
messages are translated in turn, the others are answer text and stay as written).
Templates use ``str.format`` fields (``{shown}``); a translation keeps the same fields.
"""


class M:
    """One message: an English template with named fields and their values (str, number or M)."""

    __slots__ = ("template", "params")

    def __init__(self, template, **params):
        self.template = template
        self.params = params

    def __str__(self):
        try:
            return self.template.format(**{name: str(value) for name, value in self.params.items()})
        except (KeyError, IndexError, ValueError):
            return self.template

    def __repr__(self):
        return f"M({str(self)!r})"

    def __format__(self, spec):
        return format(str(self), spec)

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __len__(self):
        return len(str(self))

    def __contains__(self, text):
        return text in str(self)

    def __getitem__(self, index):
        return str(self)[index]

    def __add__(self, other):
        return M("{first}{second}", first=self, second=other)

    def __radd__(self, other):
        return M("{first}{second}", first=other, second=self)

    def __bool__(self):
        return bool(self.template)

    def startswith(self, *args):
        return str(self).startswith(*args)

    def endswith(self, *args):
        return str(self).endswith(*args)

    def strip(self, *args):
        return str(self).strip(*args)

    def split(self, *args):
        return str(self).split(*args)

    def replace(self, *args):
        return str(self).replace(*args)


def joined(separator, items):
    """Items joined as one message (a list of messages stays translatable)."""
    items = list(items)
    if not items:
        return ""
    params = {f"i{index}": item for index, item in enumerate(items)}
    return M(separator.join("{" + name + "}" for name in params), **params)


def as_data(value):
    """The message as plain data: {"t": template, "p": {...}} (nested), or the text itself."""
    if isinstance(value, M):
        return {"t": value.template, "p": {name: as_data(item) for name, item in value.params.items()}}
    return "" if value is None else str(value)
