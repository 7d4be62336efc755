"""Running the seam's SQL on psycopg: parameter styles, rows and values as on SQLite.

Services write ``:name`` placeholders with a dict (and, while the last queries move over,
``?`` with a tuple); psycopg wants ``%(name)s`` / ``%s`` and a literal ``%`` doubled. Each
text is translated once and cached. Rows answer ``row["col"]``, ``row[0]``, ``keys()`` and
``dict(row)`` like ``sqlite3.Row``; booleans and whole numerics come back as ``int``, as
SQLite gives them, so no caller sees a ``bool`` or a ``Decimal``.
"""
from __future__ import annotations

import functools
import re
from decimal import Decimal
from typing import Any, Iterator, Sequence

from .errors import translate_pg_error
from .queries import Q

# String literals, quoted names and comments are copied as they are (only their % doubled);
# outside them ``::`` is a cast, ``:name`` and ``?`` are parameters.
_TOKEN = re.compile(r"""
    (?P<literal>'(?:[^']|'')*' | "(?:[^"]|"")*" | --[^\n]* | /\*.*?\*/)
  | (?P<cast>::)
  | :(?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<qmark>\?)
  | (?P<percent>%)
""", re.VERBOSE | re.DOTALL)


@functools.lru_cache(maxsize=2048)
def to_psycopg(sql: str) -> str:
    """``sql`` (a named query's PostgreSQL text) in psycopg's parameter style."""
    def replace(match: re.Match[str]) -> str:
        if match["literal"] is not None:
            return match["literal"].replace("%", "%%")
        if match["cast"]:
            return "::"
        if match["name"]:
            return f"%({match['name']})s"
        return "%s" if match["qmark"] else "%%"
    return _TOKEN.sub(replace, sql)


@functools.lru_cache(maxsize=2048)
def prepared(sql: str) -> str:
    """What runs on PostgreSQL for ``sql``: its override if it is a named query that has
    one, in psycopg's parameter style."""
    return to_psycopg(Q.for_dialect(sql, "postgresql"))


class Row:
    """One result row, read like ``sqlite3.Row``."""

    __slots__ = ("_values", "_index")

    def __init__(self, values: Sequence[Any], index: dict[str, int]) -> None:
        self._values, self._index = tuple(values), index

    def __getitem__(self, key: int | str | slice) -> Any:
        if isinstance(key, str):
            try:
                return self._values[self._index[key]]
            except KeyError:
                raise IndexError(f"no such column: {key}") from None
        return self._values[key]

    def keys(self) -> list[str]:
        return list(self._index)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Row) and self._values == other._values
                and self._index == other._index)

    def __hash__(self) -> int:
        return hash(self._values)

    def __repr__(self) -> str:
        return f"Row({self._values!r})"


def _plain(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def row_factory(cursor: Any):
    description = cursor.description
    if description is None:
        return None
    index: dict[str, int] = {}
    for i, column in enumerate(description):
        index.setdefault(column.name, i)  # a repeated name reads the first, as on SQLite

    def make(values: Sequence[Any]) -> Row:
        return Row([_plain(v) for v in values], index)
    return make


class Cursor:
    """What ``Connection.execute`` returns: fetchone/fetchall/rowcount and iteration."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    def fetchone(self) -> Row | None:
        return self._fetch(self._cursor.fetchone)

    def fetchall(self) -> list[Row]:
        return self._fetch(self._cursor.fetchall) or []

    def _fetch(self, how):
        if self._cursor.description is None:
            return None
        try:
            return how()
        except Exception as exc:  # psycopg.Error
            raise _translated(exc) from exc

    def __iter__(self) -> Iterator[Row]:
        return iter(self.fetchall())


def _translated(exc: Exception) -> Exception:
    import psycopg

    return translate_pg_error(exc) if isinstance(exc, psycopg.Error) else exc


class Connection:
    """A psycopg connection (autocommit: ``BEGIN``/``COMMIT`` are explicit, as on SQLite)
    that runs the seam's SQL and raises the seam's errors."""

    dialect = "postgresql"

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Any = ()) -> Cursor:
        cursor = self.raw.cursor()
        try:
            cursor.execute(prepared(sql), params if params is not None else ())
        except Exception as exc:
            raise _translated(exc) from exc
        return Cursor(cursor)

    def executemany(self, sql: str, seq_of_params: Any) -> Cursor:
        cursor = self.raw.cursor()
        try:
            cursor.executemany(prepared(sql), list(seq_of_params))
        except Exception as exc:
            raise _translated(exc) from exc
        return Cursor(cursor)

    def execute_script(self, sql: str) -> None:
        """Several statements without parameters (a migration), sent as they are."""
        try:
            self.raw.execute(sql)
        except Exception as exc:
            raise _translated(exc) from exc

    def commit(self) -> None:
        """As ``sqlite3.Connection.commit``: end an open transaction, else nothing."""
        if self.in_transaction:
            self.execute("COMMIT")

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.raw.info.transaction_status != TransactionStatus.IDLE
