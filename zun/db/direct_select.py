"""A fixed SELECT run on the driver's cursor, with SQLAlchemy's own type conversions.

A show is what fast-polling clients ask hundreds of times a second, and its one statement
spent more CPU in SQLAlchemy's per-execution machinery (execution context, result metadata,
connection events, the pool's reset) than in the database: about 0.19 of a show's 0.33 ms
in-process on SQLite. :class:`DirectSelect` compiles its statement once per dialect, as
SQLAlchemy's own cache would, then runs it on a pooled DBAPI connection and converts each
column with the result processor SQLAlchemy would have used, so the rows hold the very
values :meth:`sqlalchemy.Connection.execute` gives (``tests/functional/db`` compares both on
SQLite, MariaDB and PostgreSQL).

Only a driver error leaves this path: the connection is invalidated and the statement runs
again through SQLAlchemy, which reconnects, retries and translates errors (oslo.db's
``DBConnectionError`` and friends) exactly as before.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Engine

LOG = logging.getLogger(__name__)

Processor = Callable[[Any], Any] | None


class _Plan(NamedTuple):
    sql: str
    positional: tuple[str, ...] | None  # bind names in order, or None for named binds
    defaults: Mapping[str, Any]  # every bind's value with the caller's left out
    bind_processors: Mapping[str, Callable[[Any], Any]]
    result_types: tuple[Any, ...]


class DirectSelect:
    """``stmt`` (no expanding IN, no post-compile parameters) run straight on the cursor.

    :meth:`rows` returns tuples with attribute access by the statement's column keys, as
    SQLAlchemy's ``Row`` has.
    """

    def __init__(self, stmt: sa.Select[Any]) -> None:
        self._stmt = stmt
        self._plans: dict[Any, _Plan | None] = {}
        # Result processors depend on the driver's type codes, known after a first run.
        self._processors: dict[tuple[Any, ...], tuple[Processor, ...]] = {}
        self._lock = threading.Lock()
        keys = [column.key for column in stmt.selected_columns]
        self.row_class: type[tuple[Any, ...]] = collections.namedtuple(  # type: ignore[misc]
            "DirectRow", keys, rename=False
        )

    @property
    def statement(self) -> sa.Select[Any]:
        return self._stmt

    def _plan(self, engine: Engine) -> _Plan | None:
        dialect = engine.dialect
        try:
            return self._plans[dialect]
        except KeyError:
            pass
        with self._lock:
            if dialect not in self._plans:
                self._plans[dialect] = self._compile(engine)
            return self._plans[dialect]

    def _compile(self, engine: Engine) -> _Plan | None:
        compiled = self._stmt.compile(dialect=engine.dialect)
        if "POSTCOMPILE" in compiled.string or compiled.literal_execute_params:
            return None  # needs SQLAlchemy's expansion at execution time
        positional = tuple(compiled.positiontup or ()) if compiled.positional else None
        defaults = compiled.construct_params(_check=False)
        processors = {
            name: proc for name, proc in compiled._bind_processors.items() if callable(proc)
        }
        result_types = tuple(column.type for column in compiled._result_columns)
        if len(result_types) != len(self._stmt.selected_columns):
            return None
        return _Plan(compiled.string, positional, defaults, processors, result_types)

    def _result_processors(
        self, engine: Engine, plan: _Plan, description: Sequence[Sequence[Any]]
    ) -> tuple[Processor, ...]:
        codes = tuple(entry[1] for entry in description)
        found = self._processors.get(codes)
        if found is None:
            found = tuple(
                type_._cached_result_processor(engine.dialect, code)
                for type_, code in zip(plan.result_types, codes, strict=True)
            )
            self._processors[codes] = found
        return found

    def rows(
        self, engine: Engine, params: Mapping[str, Any], fallback: Callable[[], Sequence[Any]]
    ) -> Sequence[Any]:
        """The rows of the statement with ``params``; ``fallback()`` (the same statement
        through SQLAlchemy) when the driver fails or the statement cannot be run directly."""
        plan = self._plan(engine)
        if plan is None:
            return fallback()
        values = {**plan.defaults, **params}
        for name, processor in plan.bind_processors.items():
            values[name] = processor(values[name])
        bound: Any = (
            values if plan.positional is None else [values[name] for name in plan.positional]
        )
        connection = engine.raw_connection()
        try:
            cursor = connection.cursor()
            try:
                cursor.execute(plan.sql, bound)
                fetched = cursor.fetchall()
                description = cursor.description
            finally:
                cursor.close()
        except engine.dialect.loaded_dbapi.Error as exc:
            LOG.debug("Direct select failed (%s); running it through SQLAlchemy", exc)
            connection.invalidate(exc)
            return fallback()
        finally:
            # Back to the pool, which ends the read's transaction (reset on return).
            connection.close()
        processors = self._result_processors(engine, plan, description)
        make = self.row_class._make  # type: ignore[attr-defined]
        if not any(processors):
            return [make(row) for row in fetched]
        return [
            make(
                [
                    value if proc is None else proc(value)
                    for proc, value in zip(processors, row, strict=True)
                ]
            )
            for row in fetched
        ]
