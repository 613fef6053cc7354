"""Fast inserts for imports: rows as dicts straight into multi-row INSERT statements.

Building model instances and letting bulk_create prepare every field of every object cost
most of an import's time. Here each column's preparation is chosen once per model, rows are
plain dicts of attribute name to value (missing ones take the field default; auto_now and
auto_now_add fields take the batch's time), and history rows (django-simple-history) are
written alongside, the way bulk_create_with_history writes them.
"""
from decimal import Decimal

from django.db import connection
from django.db.models import AutoField, BigAutoField, SmallAutoField
from django.utils import timezone

AUTO_FIELDS = (AutoField, BigAutoField, SmallAutoField)
MISSING = object()


def _preparer(field):
    ops = connection.ops
    kind = field.get_internal_type()
    if kind == "JSONField":
        return lambda value: ops.adapt_json_value(value, field.encoder)
    if kind == "DateTimeField":
        return ops.adapt_datetimefield_value
    if kind == "DateField":
        return ops.adapt_datefield_value
    if kind == "DecimalField":
        def decimal(value):
            value = value if value is None or isinstance(value, Decimal) else field.to_python(value)
            return ops.adapt_decimalfield_value(value, field.max_digits, field.decimal_places)
        return decimal
    return None


class Inserter:
    """Insert rows of one model; returns the primary keys of the rows, in order."""

    def __init__(self, model):
        self.model = model
        self.fields = [f for f in model._meta.concrete_fields if not isinstance(f, AUTO_FIELDS)]
        self.prepare = [_preparer(f) for f in self.fields]
        self.pk = model._meta.pk
        self.returns_pk = isinstance(self.pk, AUTO_FIELDS)
        quote = connection.ops.quote_name
        self.head = f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in self.fields)}) VALUES "
        self.one = "(" + ", ".join(["%s"] * len(self.fields)) + ")"
        self.returning = f" RETURNING {quote(self.pk.column)}" if self.returns_pk else ""
        self.batch = max(1, connection.ops.bulk_batch_size(self.fields, [None] * 1000))

    def _plan(self, rows, now):
        """Per column: a constant (prepared once) when the rows lack it, else how to read and prepare it."""
        plan = []
        for field, prepare in zip(self.fields, self.prepare):
            if field.attname in rows[0]:
                plan.append((field.attname, _remember_last(prepare) if prepare else None, None))
                continue
            auto = getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)
            value = now if auto else field.get_default()
            plan.append((None, None, value if prepare is None or value is None else prepare(value)))
        return plan

    def insert(self, rows, now=None):
        """Insert rows (dicts with the same keys) and return their primary keys in order."""
        if not rows:
            return []
        now = now or timezone.now()
        plan = self._plan(rows, now)
        keys = []
        with connection.cursor() as cursor:
            for start in range(0, len(rows), self.batch):
                chunk = rows[start : start + self.batch]
                params = [
                    constant if name is None else (row[name] if prepare is None or row[name] is None else prepare(row[name]))
                    for row in chunk
                    for name, prepare, constant in plan
                ]
                cursor.execute(self.head + ", ".join([self.one] * len(chunk)) + self.returning, params)
                if self.returns_pk:
                    # Rows come back in VALUES order on PostgreSQL and SQLite (as bulk_create assumes).
                    keys.extend(pk for (pk,) in cursor.fetchall())
        return keys


def _remember_last(prepare):
    """prepare, reusing its last result for the same object (the batch's one `now`, mostly)."""
    last = [MISSING, None]

    def prepared(value):
        if value is not last[0]:
            last[0], last[1] = value, prepare(value)
        return last[1]
    return prepared


class HistoryInserter(Inserter):
    """Insert rows and their "+" history rows (django-simple-history), as bulk_create_with_history does."""

    def __init__(self, model):
        super().__init__(model)
        self.history = Inserter(model.history.model)

    def insert(self, rows, now=None, user=None):
        now = now or timezone.now()
        keys = super().insert(rows, now)
        if not rows:
            return keys
        defaults = {}
        for field in self.fields:
            if field.attname not in rows[0]:
                auto = getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)
                defaults[field.attname] = now if auto else field.get_default()
        history = {"history_date": now, "history_type": "+", "history_change_reason": "",
                   "history_user_id": user.pk if user else None}
        self.history.insert([{**defaults, **row, self.pk.attname: pk, **history} for row, pk in zip(rows, keys)], now)
        return keys
