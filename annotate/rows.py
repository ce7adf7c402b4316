"""Reading the one row a unique key names; appending a row once per key; rows inserted and updated by SQL built
once; queries compiled once."""
from __future__ import annotations

import copy
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from django.db import connections, router
from django.db.models import BooleanField, Func, Model, QuerySet
from django.db.models.query import FlatValuesListIterable, ModelIterable, ValuesIterable, ValuesListIterable, get_related_populators
from django.db.transaction import TransactionManagementError
from django.utils.functional import cached_property

Row = TypeVar("Row")


def unique_row(queryset: QuerySet[Row]) -> Row | None:
    """The row a filter on a unique key (a primary key, a one-to-one, a unique pair) finds, or None.

    ``QuerySet.first()`` orders by the model's ordering or its key: for one row that is an ORDER BY the
    database sorts by and Django compiles again on every request, which on the claim and submit paths
    (several such lookups each) costs more than the query itself.
    """
    rows = list(queryset[:1])
    return rows[0] if rows else None


def row_by_key_sql(model: type[Model], placeholder: str) -> str:
    """SQL of a subquery reading one row of ``model`` by its primary key (``placeholder`` the key's parameter), to
    join as a table in a hand-written statement.

    Its ``LIMIT`` keeps PostgreSQL from merging it into the outer query. Merged, the key was one condition among the
    outer query's others (a submission's assignment: its worker and status), and a generic plan made on a new
    campaign's statistics took the index by worker and status and read all of the worker's assignments to find
    the one.

    Examples
    --------
    >>> from annotate.models import Assignment
    >>> row_by_key_sql(Assignment, "%s")
    '(SELECT * FROM annotate_assignment WHERE id = %s LIMIT 1)'
    """
    return f"(SELECT * FROM {model._meta.db_table} WHERE {model._meta.pk.column} = {placeholder} LIMIT 1)"


def insert_unless_present(instance: Model) -> bool:
    """Insert ``instance``, unless a row with one of its unique values (a ledger key, say) is there already;
    whether it was inserted (its ``pk`` is set then).

    One statement, ``INSERT … ON CONFLICT DO NOTHING RETURNING`` (PostgreSQL and SQLite alike), where
    ``create()`` inside a savepoint that catches the ``IntegrityError`` costs three round trips; a submission
    appends two or three such rows. Other errors (a missing foreign key, a check constraint) still raise.
    Model signals are not sent (the append-only rows written this way have no receivers).
    """
    return bool(_insert([instance], unless_present=True))


def insert_all_unless_present(instances: Sequence[Model], *, by: str) -> set[Any]:
    """:func:`insert_unless_present` for several rows of one model in one statement: the values of their
    unique field ``by`` (a ledger key) that were inserted now; the others were there already.

    A submission's pay and bonus, or its pay decisions, go in together: one round trip where one per row was.

    Examples
    --------
    >>> insert_all_unless_present([BonusEntry(key="pay:7", ...), BonusEntry(key="item-bonus:7", ...)], by="key")  # doctest: +SKIP
    {'pay:7', 'item-bonus:7'}
    """
    if not instances:
        return set()
    return set(_insert(instances, unless_present=True, returning=by))


def insert_groups_unless_present(groups: Sequence[Sequence[Model]], *, by: str) -> list[set[Any]]:
    """:func:`insert_all_unless_present` for groups of rows, each group of one model with the unique field ``by``,
    in one statement on PostgreSQL (each group's insert a ``WITH`` of its own; elsewhere one statement a group):
    for each group, the values of ``by`` inserted now. A submission's pay decisions and its ledger entries go in
    together.

    Examples
    --------
    >>> insert_groups_unless_present([[PayDecision(key="refused:7", ...)], [BonusEntry(key="pay:7", ...)]], by="key")  # doctest: +SKIP
    [{'refused:7'}, {'pay:7'}]
    """
    written = [list(group) for group in groups]
    nonempty = [n for n, group in enumerate(written) if group]
    appended: list[set[Any]] = [set() for _ in written]
    if not nonempty:
        return appended
    connection = _write_connection(written[nonempty[0]][0])
    if connection.vendor != "postgresql" or len(nonempty) == 1:
        for n in nonempty:
            appended[n] = insert_all_unless_present(written[n], by=by)
        return appended
    parts = [_insert_statement(written[n], connection, unless_present=True, returning=by) for n in nonempty]
    key = ("together unless present", tuple(part.key for part in parts))
    sql = _STATEMENTS.get(key)
    if sql is None:
        ctes = ", ".join(f"w{n}(k, b) AS ({part.sql})" for n, part in enumerate(parts))
        sql = f"WITH {ctes} " + " UNION ALL ".join(f"SELECT {n}, k::text, b::text FROM w{n}" for n in range(len(parts)))
        if all(part.any_rows for part in parts):
            _kept_statement(key, sql)
    with connection.cursor() as cursor:
        cursor.execute(sql, [value for part in parts for value in part.values])
        returned = cursor.fetchall()
    for position, pk, value in returned:  # a conflict returns no row
        group = written[nonempty[position]]
        field = group[0]._meta.get_field(by)
        instance = next(instance for instance in group if str(getattr(instance, field.attname)) == value)
        _stored(instance, instance._meta.pk.to_python(pk), connection.alias)
        appended[nonempty[position]].add(getattr(instance, field.attname))
    return appended


def insert_row(instance: Model) -> None:
    """Insert ``instance`` as ``save()`` does for a new row (its ``pk`` is set), in one ``INSERT … RETURNING``,
    where ``save()`` builds and compiles an insert query each time (a claim and a reading check insert one row
    each). A unique conflict raises ``IntegrityError`` as ``save()`` does. Model signals are not sent (the rows
    written this way have no receivers).
    """
    _insert([instance], unless_present=False)


def write_together(*, insert: Sequence[Sequence[Model]] = (), update: Sequence[tuple[Model, Sequence[str]]] = ()) -> None:
    """Insert groups of new rows (each group of one model) as :func:`insert_row` inserts each (their ``pk`` set, a
    unique conflict raising ``IntegrityError``) and write ``(instance, fields)`` pairs as :func:`update_row` does,
    in one statement on PostgreSQL (each insert and update a ``WITH`` of its own), where each was a round trip: a
    submission's reading-check answer, sentence answers and trap answers; its assignment and its participation's
    counters; a claim's assignment and its item's live count. Elsewhere (the demo's SQLite, which has no ``INSERT``
    or ``UPDATE`` inside ``WITH``) one statement each, in the order given. Empty insert groups are left out. An
    update whose row is gone raises ``DoesNotExist`` naming it (the caller's transaction rolls back the rest).
    Model signals are not sent.

    Examples
    --------
    >>> write_together(insert=[[reading_answer], judgements], update=[(assignment, ["status"])])  # doctest: +SKIP
    """
    groups = [list(group) for group in insert if group]
    if not groups and not update:
        return
    connection = _write_connection(groups[0][0] if groups else update[0][0])
    if connection.vendor != "postgresql" or len(groups) + len(update) == 1:
        for group in groups:
            _insert(group, unless_present=False)
        for instance, fields in update:
            if not update_row(instance, fields):
                raise _gone(instance)
        return
    parts = [_insert_statement(group, connection, unless_present=False) for group in groups]
    parts += [_update_statement(instance, fields, connection) for instance, fields in update]
    key = ("together", tuple(part.key for part in parts))
    sql = _STATEMENTS.get(key)
    if sql is None:
        # Each insert's keys as text (the groups' key types may differ, and UNION ALL needs one type per column);
        # each update's rows as NULLs, counted.
        ctes = [f"w{n}(k, b) AS ({part.sql})" for n, part in enumerate(parts[:len(groups)])]
        ctes += [f"w{n} AS ({part.sql} RETURNING NULL AS k)" for n, part in enumerate(parts) if n >= len(groups)]
        rows = " UNION ALL ".join(f"SELECT {n}, k::text FROM w{n}" for n in range(len(parts)))
        sql = f"WITH {', '.join(ctes)} {rows}"
        if all(part.any_rows or len(group) <= _KEPT_TOGETHER_ROWS for part, group in zip(parts, groups)):
            _kept_statement(key, sql)
    with connection.cursor() as cursor:
        cursor.execute(sql, [value for part in parts for value in part.values])
        returned = cursor.fetchall()
    keys: dict[int, list[str]] = {}
    for n, pk in returned:
        keys.setdefault(n, []).append(pk)
    # Each group's rows come back in the order of its VALUES (as bulk_create relies on).
    for n, group in enumerate(groups):
        for instance, pk in zip(group, keys[n]):
            _stored(instance, instance._meta.pk.to_python(pk), connection.alias)
    for n, (instance, _) in enumerate(update, start=len(groups)):
        if n not in keys:
            raise _gone(instance)


@dataclass
class _Statement:
    key: tuple
    sql: str
    values: list[Any]
    #: Whether the SQL is kept whatever the number of rows (sent as arrays, or few enough to be kept as ``VALUES``).
    any_rows: bool = True


def _stored(instance: Model, pk: Any, alias: str) -> None:
    """Mark ``instance`` as the row just inserted with key ``pk``, as ``save()`` leaves it."""
    instance.pk = pk
    instance._state.adding, instance._state.db = False, alias


def _write_connection(instance: Model):
    return connections[router.db_for_write(type(instance), instance=instance)]


def _kept_statement(key: tuple, sql: str) -> None:
    if len(_STATEMENTS) >= _STATEMENT_LIMIT:  # a long-lived process whose row counts varied widely starts again
        _STATEMENTS.clear()
    _STATEMENTS[key] = sql


def _insert_statement(instances: Sequence[Model], connection, *, unless_present: bool, returning: str | None = None) -> _Statement:
    """The SQL of one insert of ``instances`` (one model) and its values: built once per model, column list, conflict
    rule and database (and row count, where the rows go as ``VALUES``); each value prepared by its field as
    ``save()`` prepares it. It returns each inserted row's key and its ``returning`` field (the key again without
    one).

    On PostgreSQL several rows go as one array a column (``SELECT * FROM UNNEST(…)``, as Django's ``bulk_create``
    sends them): the statement's text and its parameters' count do not change with the number of rows (a
    submission's sentence answers vary from item to item), so psycopg converts it once and PostgreSQL prepares it
    once per connection, where each row count was a statement of its own, over psycopg's limit on the parameters
    of a statement it keeps converted."""
    first = instances[0]
    meta = first._meta
    fields = [field for field in meta.concrete_fields if not (field.primary_key and getattr(first, field.attname) is None)]
    back = meta.get_field(returning) if returning else meta.pk
    rows = [[field.get_db_prep_save(field.pre_save(instance, True), connection) for field in fields] for instance in instances]
    as_arrays = len(instances) > 1 and _unnestable(fields, rows, connection)
    key = ("insert", type(first), tuple(field.attname for field in fields), "arrays" if as_arrays else len(instances),
           unless_present, back.attname, connection.alias, connection.vendor)
    sql = _STATEMENTS.get(key)
    if sql is None:
        quote = connection.ops.quote_name
        if as_arrays:
            arrays = ", ".join(f"(%s)::{field.db_type(connection).split('(')[0]}[]" for field in fields)
            source = f"SELECT * FROM UNNEST({arrays})"
        else:
            row = f"({', '.join(['%s'] * len(fields))})"
            source = f"VALUES {', '.join([row] * len(instances))}"
        sql = (
            f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) {source} "
            f"{'ON CONFLICT DO NOTHING ' if unless_present else ''}RETURNING {quote(meta.pk.column)}, {quote(back.column)}"
        )
        if as_arrays or len(instances) <= _KEPT_ROW_COUNTS:  # a settlement's many rows vary in number: built each time
            _kept_statement(key, sql)
    values = [list(column) for column in zip(*rows)] if as_arrays else [value for row in rows for value in row]
    return _Statement(key, sql, values, any_rows=as_arrays or len(instances) <= _KEPT_ROW_COUNTS)


def _unnestable(fields: Sequence, rows: Sequence[Sequence[Any]], connection) -> bool:
    """Whether these rows can go as one array a column: PostgreSQL, every column of a type of its own (no field
    that chooses its placeholder by value) and no value an SQL expression (the conditions of Django's own)."""
    if connection.vendor != "postgresql":
        return False
    for field in fields:
        target = field.target_field if field.is_relation else field
        if hasattr(field, "get_placeholder") or target.get_internal_type() not in connection.data_types:
            return False
    return not any(hasattr(value, "as_sql") for row in rows for value in row)


def _insert(instances: Sequence[Model], *, unless_present: bool, returning: str | None = None) -> list[Any]:
    """The one insert of :func:`insert_row` and the ``unless_present`` functions (:func:`_insert_statement`). Sets
    the ``pk`` of each row inserted; returns their ``returning`` field's values (or their keys)."""
    first = instances[0]
    connection = _write_connection(first)
    statement = _insert_statement(instances, connection, unless_present=unless_present, returning=returning)
    with connection.cursor() as cursor:
        cursor.execute(statement.sql, statement.values)
        rows = cursor.fetchall()
    back = first._meta.get_field(returning).attname if returning else None
    by_value = {getattr(instance, back): instance for instance in instances} if back else {}
    for pk, value in rows:  # a conflict (unless_present) returns no row
        _stored(by_value[value] if returning else first, pk, connection.alias)
    return [value for _, value in rows]


def update_row(instance: Model, fields: Sequence[str]) -> bool:
    """Write ``fields`` of ``instance`` to its row, as ``save(update_fields=fields)`` does (``auto_now`` fields
    named are set to now), in one ``UPDATE`` whose SQL is built once per model, fields and database: a submission
    writes its kept counts this way, where ``save()`` builds and compiles an update query each time. Whether a row
    had the instance's key (``save()`` raises where none had). Model signals are not sent (the rows written this
    way have no receivers).
    """
    connection = _write_connection(instance)
    statement = _update_statement(instance, fields, connection)
    with connection.cursor() as cursor:
        cursor.execute(statement.sql, statement.values)
        return cursor.rowcount > 0


def _gone(instance: Model) -> Exception:
    return type(instance).DoesNotExist(f"no {instance._meta.model_name} row with key {instance.pk!r}")


def _update_statement(instance: Model, fields: Sequence[str], connection) -> _Statement:
    meta = instance._meta
    key = ("update", type(instance), tuple(fields), connection.alias, connection.vendor)
    sql = _STATEMENTS.get(key)
    if sql is None:
        quote = connection.ops.quote_name
        columns = ", ".join(f"{quote(meta.get_field(name).column)} = %s" for name in fields)
        sql = f"UPDATE {quote(meta.db_table)} SET {columns} WHERE {quote(meta.pk.column)} = %s"
        _kept_statement(key, sql)
    values = []
    for name in fields:
        field = meta.get_field(name)
        values.append(field.get_db_prep_save(field.pre_save(instance, False), connection))
    values.append(meta.pk.get_db_prep_value(instance.pk, connection))
    return _Statement(key, sql, values)


def add_to_column(instance: Model, name: str, amount: int) -> Any:
    """Add ``amount`` to the column ``name`` of ``instance``'s row in the database (``F(name) + amount``, safe
    beside concurrent writers without a row lock) and set the instance's field to the result, in one
    ``UPDATE … RETURNING`` where an update and a ``refresh_from_db`` were two queries."""
    meta = instance._meta
    connection = connections[router.db_for_write(type(instance), instance=instance)]
    key = ("add", type(instance), name, connection.alias, connection.vendor)
    sql = _STATEMENTS.get(key)
    if sql is None:
        quote = connection.ops.quote_name
        column = quote(meta.get_field(name).column)
        sql = _STATEMENTS[key] = f"UPDATE {quote(meta.db_table)} SET {column} = {column} + %s WHERE {quote(meta.pk.column)} = %s RETURNING {column}"
    with connection.cursor() as cursor:
        cursor.execute(sql, [amount, meta.pk.get_db_prep_value(instance.pk, connection)])
        row = cursor.fetchone()
    if row is None:
        raise _gone(instance)
    setattr(instance, meta.get_field(name).attname, row[0])
    return row[0]


# The SQL of the inserts and updates above, by statement, model, columns, row counts and database.
_STATEMENTS: dict[tuple, str] = {}
_KEPT_ROW_COUNTS = 4  # inserts of at most this many rows keep their SQL (a submission appends two or three)
_KEPT_TOGETHER_ROWS = 32  # writes together keep their SQL while each group has at most this many rows (an item's answers)
_STATEMENT_LIMIT = 2048  # a submission's answers vary in number: kept up to a bound


class LockedRowAsSeen(Func):
    """In a ``SELECT … FOR UPDATE`` of ``model``'s rows: true when the row locked is the version the statement's
    snapshot saw, so that no transaction which committed after the statement began has written it.

    Under READ COMMITTED a statement that waits for a row lock returns the row's latest version but reads
    everything else (its subqueries) as of its start: what a writer that held the lock committed meanwhile is
    missing from them. Where every such writer also writes the locked row, a true value here says the
    subqueries are complete; a false one, that they must be read again in a statement of their own. PostgreSQL
    compares the locked version's ``xmin`` with that of the version the snapshot sees; the demo's SQLite has
    one writer at a time, so the row is always as seen there.

    Examples
    --------
    >>> Participation.objects.select_for_update().annotate(as_seen=LockedRowAsSeen(Participation))  # doctest: +SKIP
    """

    output_field = BooleanField()

    def __init__(self, model: type[Model]) -> None:
        super().__init__()
        self.model = model

    def as_sql(self, compiler, connection, **extra):
        return "1", []

    def as_postgresql(self, compiler, connection, **extra):
        quote = compiler.quote_name_unless_alias
        table, pk = self.model._meta.db_table, quote(self.model._meta.pk.column)
        locked = quote(compiler.query.get_initial_alias())
        return f"({locked}.xmin = (SELECT seen.xmin FROM {quote(table)} seen WHERE seen.{pk} = {locked}.{pk}))", []


class CompiledQuery:
    """A queryset of a fixed shape that Django compiles to SQL once per process, then runs with new values.

    Building a queryset and compiling it (cloning, resolving lookups and joins, naming every column) costs a
    web worker more CPU than the database spends answering the query: on the task page, reading check and
    submit paths it was a third of a request's CPU. ``build`` is called once, with a placeholder for each
    parameter named in ``params`` (name → ``int``, ``str`` or ``datetime``), and returns the queryset; each
    call then binds the parameters' values into the stored SQL and reads the rows as the queryset would have
    (models with their ``select_related`` relations, ``values_list`` tuples, converters applied).

    Every value that varies between calls must be a parameter: a ``timezone.now()`` inside ``build`` would be
    compiled once and kept. A parameter must reach the SQL as one value (``pk=user_id``, not
    ``pk__in=ids``, which compiles one placeholder per element); a placeholder that Django does not pass
    through unchanged is refused when the query is first compiled. A ``select_for_update`` query is run, like
    any, inside a transaction.

    Examples
    --------
    >>> from django.contrib.auth.models import User
    >>> user_by_id = CompiledQuery(lambda user_id: User.objects.filter(pk=user_id), user_id=int)
    >>> user_by_id.row(user_id=1)  # doctest: +SKIP
    <User: admin>
    """

    def __init__(self, build: Callable[..., QuerySet], **params: type) -> None:
        unknown = {name: kind for name, kind in params.items() if kind not in _PLACEHOLDERS}
        if unknown:
            raise TypeError(f"CompiledQuery parameters must be int, str or datetime: {unknown}")
        self._build, self._params = build, params
        self._compiled: dict[tuple[str, str], _Compiled] = {}  # by database alias and vendor (SQL is a dialect's)
        # One compilation at a time: a gthread worker's requests may all be the first to run the query, and Django
        # compiling one query object in several threads at once mixes up its table aliases (broken SQL, kept).
        self._compiling = threading.Lock()

    def rows(self, **values: Any) -> list:
        """Every row the query finds with these parameter values."""
        connection, compiled, params = self._bind(values)
        if compiled.reader is None:  # an iterable class without a reader of its own: the queryset reads the rows
            base = compiled.queryset
            bound = QuerySet(model=base.model, query=_BoundQuery(base.query, compiled, params), using=connection.alias)
            bound._iterable_class, bound._fields, bound._for_write = base._iterable_class, base._fields, base._for_write
            return list(bound)
        # The statement and the rows straight from the cursor: a queryset, its iterable and a copy of the compiler
        # built per call, and the rows fetched in chunks, were as much CPU again as reading the rows themselves.
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            fetched = cursor.fetchall()
        return compiled.reader.read(fetched, connection)

    def row(self, **values: Any) -> Any | None:
        """The first row the query finds (build it with ``[:1]`` for one row on a unique key), or None."""
        rows = self.rows(**values)
        return rows[0] if rows else None

    def _bind(self, values: dict[str, Any]) -> tuple[Any, _Compiled, tuple]:
        """This thread's connection, the query compiled for it and the SQL's parameters with these values."""
        if values.keys() != self._params.keys():
            raise TypeError(f"CompiledQuery takes exactly the parameters {sorted(self._params)}, got {sorted(values)}")
        alias = router.db_for_read(self._model) if not self._for_write else router.db_for_write(self._model)
        connection = connections[alias]
        compiled = self._compiled.get((alias, connection.vendor)) or self._compile(alias)
        if compiled.queryset.query.select_for_update and not connection.in_atomic_block:
            raise TransactionManagementError("select_for_update cannot be used outside of a transaction.")
        params = list(compiled.params)
        for name, positions in compiled.positions.items():
            value = _PLACEHOLDERS[self._params[name]].bind(values[name], connection)
            for position in positions:
                params[position] = value
        return connection, compiled, tuple(params)

    def _with_markers(self) -> QuerySet:
        return self._build(**{name: _PLACEHOLDERS[kind].marker(i) for i, (name, kind) in enumerate(self._params.items())})

    @cached_property
    def _sample(self) -> QuerySet:
        """The query as built, for its model and whether it writes (never compiled: each compilation builds its own)."""
        return self._with_markers()

    @property
    def _model(self) -> type[Model]:
        return self._sample.model

    @property
    def _for_write(self) -> bool:
        return self._sample._for_write

    def _compile(self, alias: str) -> _Compiled:
        connection = connections[alias]
        with self._compiling:
            compiled = self._compiled.get((alias, connection.vendor))  # compiled by another thread meanwhile
            return compiled if compiled is not None else self._compile_now(alias)

    def _compile_now(self, alias: str) -> _Compiled:
        queryset = self._with_markers()
        if queryset._prefetch_related_lookups or queryset._known_related_objects:
            raise TypeError("CompiledQuery runs one query: no prefetch_related, no related-manager querysets")
        connection = connections[alias]
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        positions = {}
        for i, (name, kind) in enumerate(self._params.items()):
            expected = _PLACEHOLDERS[kind].bind(_PLACEHOLDERS[kind].marker(i), connection)
            found = [k for k, value in enumerate(params) if type(value) is type(expected) and value == expected]
            if not found:
                raise TypeError(f"CompiledQuery parameter {name!r} does not reach the SQL as one value: {sql}")
            positions[name] = found
        compiled = _Compiled(queryset, compiler, sql, tuple(params), positions, _RowReader.for_query(queryset, compiler))
        self._compiled[(alias, connection.vendor)] = compiled
        return compiled


class CompiledQueries:
    """:class:`CompiledQuery` objects made on first use, one per key, for a query whose shape depends on the key (a
    protocol kind's joined relations, a campaign's slot settings). Past ``limit`` keys all are forgotten and made
    again as needed: a long-lived process whose campaigns' settings changed many times does not grow without end."""

    def __init__(self, limit: int = 512) -> None:
        self._queries: dict[Any, CompiledQuery] = {}
        self._limit = limit

    def get(self, key: Any, make: Callable[[], CompiledQuery]) -> CompiledQuery:
        """The query kept under ``key``, made by ``make()`` the first time."""
        query = self._queries.get(key)
        if query is None:
            if len(self._queries) >= self._limit:
                self._queries.clear()
            query = self._queries[key] = make()
        return query


@dataclass(frozen=True)
class _Placeholder:
    marker: Callable[[int], Any]  # the i-th parameter's stand-in while compiling: a value no caller passes
    bind: Callable[[Any, Any], Any]  # (value, connection) -> the value as the SQL's parameter


# Within every integer column's range (Django finds nothing for a value out of its column's range, without SQL).
_MARKER_BASE = 2_146_999_000
_PLACEHOLDERS: dict[type, _Placeholder] = {
    int: _Placeholder(lambda i: _MARKER_BASE + i, lambda value, connection: int(value)),
    str: _Placeholder(lambda i: f"\u2983compiled-query-parameter-{i}\u2984", lambda value, connection: str(value)),
    datetime: _Placeholder(
        lambda i: datetime(1901, 1, 1, tzinfo=UTC) + timedelta(microseconds=i),
        lambda value, connection: connection.ops.adapt_datetimefield_value(value),
    ),
}


@dataclass(frozen=True)
class _Compiled:
    queryset: QuerySet  # as built with the placeholders: its model, iterable class and fields
    compiler: Any  # set up by compiling: its select list and related-object layout read the rows
    sql: str
    params: tuple
    positions: dict[str, list[int]]  # where each parameter's value goes in ``params``
    reader: _RowReader | None  # turns the fetched rows into what the queryset yields (None: the queryset does)


class _RowReader:
    """What a compiled query's queryset would yield, built from the rows its cursor fetched: models with their
    ``select_related`` relations and annotations, or ``values()`` dicts, ``values_list()`` tuples or flat values,
    with Django's converters applied (JSON decoding, time zones). Made once per compiled query, from the select
    list its compilation laid out; :meth:`for_query` gives None for what it does not read (named tuples, composite
    keys, selected expressions that are not in the row), which the queryset then reads itself."""

    def __init__(self, compiler, kind: str, columns: int, names: tuple[str, ...] = ()) -> None:
        self._compiler, self._kind, self._columns, self._names = compiler, kind, columns, names
        self._expressions = [selected[0] for selected in compiler.select[:columns]]
        # The converters (found column by column) and the related rows' populators, once per connection: both hold
        # it, and another thread's connection is another object (weakly held, so a closed thread's goes with it).
        self._per_connection: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        if kind == "models":
            info = compiler.klass_info
            self._model = info["model"]
            first, last = info["select_fields"][0], info["select_fields"][-1] + 1
            self._model_columns = slice(first, last)
            self._init_list = [selected[0].target.attname for selected in compiler.select[first:last]]
            self._annotations = tuple(compiler.annotation_col_map.items())

    @classmethod
    def for_query(cls, queryset: QuerySet, compiler) -> _RowReader | None:
        query, iterable = queryset.query, queryset._iterable_class
        columns = compiler.col_count
        if compiler.has_composite_fields([selected[0] for selected in compiler.select[:columns]]):
            return None
        if iterable is ModelIterable:
            return cls(compiler, "models", columns)
        if iterable is ValuesIterable:
            names = list(query.selected) if query.selected else [*query.extra_select, *query.values_select, *query.annotation_select]
            return cls(compiler, "dicts", columns, tuple(names))
        if iterable is ValuesListIterable:
            return cls(compiler, "tuples", columns)
        if iterable is FlatValuesListIterable:
            return cls(compiler, "flat", columns)
        return None

    def _for(self, connection) -> tuple[list, list]:
        kept = self._per_connection.get(connection)
        if kept is None:
            compiler = copy.copy(self._compiler)
            compiler.connection = connection
            converters = list(compiler.get_converters(self._expressions).items())
            populators = (
                get_related_populators(self._compiler.klass_info, self._compiler.select, connection.alias) if self._kind == "models" else []
            )
            kept = self._per_connection[connection] = (converters, populators)
        return kept

    def read(self, fetched: list[tuple], connection) -> list:
        converters, populators = self._for(connection)
        if converters or len(fetched[0] if fetched else ()) != self._columns:
            rows = []
            for fetched_row in fetched:
                row = list(fetched_row[: self._columns])
                for position, (functions, expression) in converters:
                    value = row[position]
                    for function in functions:
                        value = function(value, expression, connection)
                    row[position] = value
                rows.append(row)
        else:
            rows = fetched
        if self._kind == "flat":
            return [row[0] for row in rows]
        if self._kind == "tuples":
            return [tuple(row) for row in rows]
        if self._kind == "dicts":
            return [dict(zip(self._names, row)) for row in rows]
        objects, db = [], connection.alias
        for row in rows:
            instance = self._model.from_db(db, self._init_list, row[self._model_columns])
            for populator in populators:
                populator.populate(row, instance)
            for name, position in self._annotations:
                setattr(instance, name, row[position])
            objects.append(instance)
        return objects


class _BoundQuery:
    """The compiled query with this call's values: hands out the compiled compiler with the stored SQL; anything
    else a queryset's iterable reads of its query (the selected names) comes from the query compiled. Only what
    :class:`_RowReader` does not read comes this way (named tuples, composite keys), none of it on a hot path: its
    converters are looked up as Django looks them up, at every run."""

    def __init__(self, query, compiled: _Compiled, params: tuple) -> None:
        self._query, self._compiled, self._params = query, compiled, params

    def get_compiler(self, using=None, connection=None, elide_empty=True):
        compiled = self._compiled
        compiler = copy.copy(compiled.compiler)
        # The connection of this thread (the compiled compiler holds the one of the thread that compiled it).
        compiler.connection = connection if connection is not None else connections[using or compiled.compiler.using]
        compiler.as_sql = lambda *args, **kwargs: (compiled.sql, self._params)
        return compiler

    def __getattr__(self, name: str) -> Any:
        return getattr(self._query, name)
