"""Moved to `core.form_fields` (issue 35). Kept only until `studies/forms.py`, which is moving
to the top-level `studies` app, imports it from there; then this file goes."""
from core.form_fields import IdModelChoiceField, IdModelMultipleChoiceField

__all__ = ["IdModelChoiceField", "IdModelMultipleChoiceField"]
