"""Named SQL: ``sql/queries/*.sql`` (``-- name: get_user`` headers) for every dialect, plus
``sql/postgresql/queries/*.sql`` overriding, by the same name, the few that must differ.

``Q.name`` is always the common text: services pass it to whichever connection they hold,
and the PostgreSQL connection swaps in the override (``Q.for_dialect``), so no service
branches on the backend.
"""
from __future__ import annotations

import re
from importlib import resources

_QUERY_HEADER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)
DIALECTS = ("sqlite", "postgresql")
# Pieces of SQL that differ by dialect inside otherwise common queries, written
# ``{{name}}`` in sql/queries: a whole override per query would repeat the rest of it.
FRAGMENTS = {
    "sqlite": {
        "search_matches": "topic_search MATCH :match",  # FTS5, :match from search.match_query
        "search_terms": ":terms",
        # Before a searched listing's "rowid IN (matches)": SQLite's unary + keeps the planner
        # walking the sort's index and stopping at a page, instead of starting from every
        # match and sorting them all (20 ms against 2 ms for a common word at 10,000
        # questions).
        "unindexed": "+",
    },
    "postgresql": {
        "search_matches": "terms @@ to_tsquery('simple', :match)",  # a tsvector column
        "search_terms": "to_tsvector('simple', :terms)",
        # PostgreSQL weighs both ways itself; + would keep it from probing topics by rowid
        # when a word is rare.
        "unindexed": "",
    },
}
_MEMORY_TITLE = ("(SELECT v.title FROM question_versions v WHERE v.topic_id = t.id"
                 " AND SUBSTR(m.text, 1, LENGTH(v.title) + 3) = '《' || v.title || '》：'"
                 " ORDER BY LENGTH(v.title) DESC LIMIT 1)")
# And pieces the same in every dialect, written once for the queries that share them.
SHARED_FRAGMENTS = {
    # A task row as services read it: selected, and returned by the writes that change it.
    "task_columns": "id, user_id, profile_id, token_id, topic_id, request_id, reply_to, state,"
                    " created, updated, expires, message_id, error, question_version,"
                    " private_included, frozen_messages, result_hash, agent_failed",
    # A topic as services read it (topics t joined with its author, users u).
    "topic_columns": "t.id, t.community_id, t.island_id, t.author_id, t.kind, t.intent,"
                     " t.original_title, t.title, t.description, t.status, t.version,"
                     " t.message_count, t.created, t.updated, t.closed_at,"
                     " t.hidden_at, t.hidden_reason, u.username AS author_name",
    # A memory (memories m, LEFT JOIN its answer's question, topics t) begins "《title》：",
    # the title in force when it was made: one of the question's versions' titles, the
    # longest that fits (a title may itself hold "》：").
    "memory_title": _MEMORY_TITLE,
    # Its text as its person and their agent read it: where an admin took that question down
    # and the person did not ask it, :taken_down stands in for that 《title》 (and for the
    # whole text, should no version's title fit: nothing of the title goes out).
    "memory_text": "CASE WHEN t.hidden_at IS NULL OR t.author_id = m.user_id THEN m.text"
                   " ELSE CAST(:taken_down AS TEXT) || '：' ||"
                   f" COALESCE(SUBSTR(m.text, LENGTH({_MEMORY_TITLE}) + 4), '') END",
}
_FRAGMENT = re.compile(r"\{\{([a-z_]+)\}\}")


def _with_fragments(sql: str, dialect: str) -> str:
    def piece(match: re.Match) -> str:
        name = match.group(1)
        return SHARED_FRAGMENTS[name] if name in SHARED_FRAGMENTS else FRAGMENTS[dialect][name]
    return _FRAGMENT.sub(piece, sql)


def sql_dir(dialect: str, kind: str):
    base = resources.files("lobbytalks").joinpath("sql")
    return base.joinpath(kind) if dialect == "sqlite" else base.joinpath(dialect, kind)


# A listing a search can filter is written once, its search filter on a line of its own
# (the line with {{search_matches}}), and loaded as two queries: NAME without that line and
# NAME + SEARCHING with it. One query with "(:match IS NULL OR ...)" kept PostgreSQL from
# planning the filter as a join: it read every match before the first row of a page (60 ms
# for a common word at 10,000 questions, against 2 ms as a join).
SEARCHING = "_searching"
_SEARCH_FILTER_LINE = re.compile(r"^[^\n]*\{\{search_matches\}\}[^\n]*\n?", re.MULTILINE)


def _variants(name: str, sql: str) -> list[tuple[str, str]]:
    if not _SEARCH_FILTER_LINE.search(sql):
        return [(name, sql)]
    return [(name, _SEARCH_FILTER_LINE.sub("", sql)), (name + SEARCHING, sql)]


def _parse(filename: str, text: str, into: dict[str, str]) -> None:
    parts = _QUERY_HEADER.split(text)
    for written, body in zip(parts[1::2], parts[2::2]):
        for name, sql in _variants(written, _statement(body)):
            if name in into:
                raise ValueError(f"duplicate query name {name!r} in {filename}")
            into[name] = sql


def _statement(body: str) -> str:
    """A query's text without the comment lines that introduce the next query."""
    lines = body.strip().splitlines()
    while lines and lines[-1].lstrip().startswith("--"):
        lines.pop()
    return "\n".join(lines).strip().rstrip(";")


def _load_dir(directory) -> dict[str, str]:
    found: dict[str, str] = {}
    for entry in sorted(directory.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".sql"):
            _parse(entry.name, entry.read_text("utf-8"), found)
    return found


class Queries:
    def __init__(self) -> None:
        written = _load_dir(sql_dir("sqlite", "queries"))
        self._sql = {name: _with_fragments(sql, "sqlite") for name, sql in written.items()}
        self._overrides = {dialect: {name: _with_fragments(sql, dialect)
                                     for name, sql in _load_dir(sql_dir(dialect, "queries")).items()}
                           for dialect in ("postgresql",)}
        for dialect, overrides in self._overrides.items():
            unknown = sorted(set(overrides) - set(self._sql))
            if unknown:
                raise ValueError(f"{dialect} overrides unknown queries: {', '.join(unknown)}")
            for name, sql in written.items():
                if _FRAGMENT.search(sql) and name not in overrides:
                    overrides[name] = _with_fragments(sql, dialect)
        self._name_of = {sql: name for name, sql in self._sql.items()}

    def _load(self, filename: str, text: str) -> None:
        _parse(filename, text, self._sql)

    def __getattr__(self, name: str) -> str:
        try:
            return self._sql[name]
        except KeyError:
            raise AttributeError(f"no named query {name!r}") from None

    def __contains__(self, name: str) -> bool:
        return name in self._sql

    def for_dialect(self, sql: str, dialect: str) -> str:
        """The text to run on ``dialect`` for ``sql``: its override when ``sql`` is a named
        query that has one, else ``sql`` itself."""
        name = self._name_of.get(sql)
        return self._overrides.get(dialect, {}).get(name, sql) if name else sql

    def overridden(self, dialect: str) -> list[str]:
        return sorted(self._overrides.get(dialect, {}))


Q = Queries()
