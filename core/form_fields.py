"""Form fields that choose rows by id, refusing an id no column can hold before any query.

Django's ModelChoiceField and ModelMultipleChoiceField hand the submitted text to the database:
a 25-digit id made SQLite raise OverflowError (a 500) and PostgreSQL a DataError. These read
the id with the one parser (core.numbers.parse_id: ASCII digits, 1 to 2**63 - 1) and answer
anything else with the field's own "not one of the available choices" error.
"""
from django import forms
from django.core.exceptions import ValidationError

from core.numbers import parse_id


class IdModelChoiceField(forms.ModelChoiceField):
    def to_python(self, value):
        if value in self.empty_values:
            return None
        if self.to_field_name is None and not isinstance(value, self.queryset.model) and parse_id(value) is None:
            raise ValidationError(self.error_messages["invalid_choice"], code="invalid_choice",
                                  params={"value": str(value)[:40]})
        return super().to_python(value)


class IdModelMultipleChoiceField(forms.ModelMultipleChoiceField):
    def _check_values(self, value):
        if self.to_field_name is None:
            for pk in value:
                if parse_id(pk) is None:
                    raise ValidationError(self.error_messages["invalid_pk_value"], code="invalid_pk_value",
                                          params={"pk": str(pk)[:40]})
        return super()._check_values(value)
