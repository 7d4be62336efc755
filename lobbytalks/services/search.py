"""Finding questions by the words of their title and public background.

The index is an FTS5 table (``topic_search``) whose rowid is the topic's rowid. FTS5's
tokenizers split Latin text into words but keep a run of Chinese characters as one token,
and the trigram tokenizer cannot match the two-character words Chinese mostly uses (备份,
索引). So the text is prepared here: every run of CJK characters is written as its single
characters followed by its overlapping pairs, a hyphenated word also as one word ("Wi-Fi":
"wi fi wifi", searched as "wifi" or as its parts), and everything else is left to
``unicode61``.
A query for 数据库 then becomes the phrase "数据 据库", 库 the single character, and a
Latin word a prefix (``backup*`` finds "backups").

Only public text is indexed (title and public background): never private context or
answers, so a search can never reveal what its reader may not read. The index is written in
the same transaction as the question it describes.
"""
from __future__ import annotations

import re
import unicodedata

from ..db import Connection, Q, Row, dialect_of
from ..security import ID_CHARS
from ..textrules import CJK_CHARS, as_read

# Han (with extensions and compatibility forms), kana and Hangul syllables.
_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_WORD = re.compile(r"\w+")
MAX_QUERY_TERMS = 8


_SEPARATORS = re.compile(r"[\W_]+")


def _folded(text: str) -> str:
    """Text outside a CJK run as both indexes split it: diacritics gone ("café" -> "cafe")
    and each run of what is no letter or digit a space ("example.org" -> "example org",
    "3.14" -> "3 14"). FTS5's unicode61 does both itself; PostgreSQL's 'simple' parser keeps
    accents, and hosts, e-mail addresses and decimals whole, so that "cafe", "3.14" or
    "example.org" found a question on SQLite and not on PostgreSQL."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _SEPARATORS.sub(" ", bare)


# A word written with hyphens ("Wi-Fi", "e-mail"): indexed as its parts and as one word,
# and searched as either, so that "wifi", "WiFi" and "Wi-Fi" find each other.
# (Possessive: a word that has no hyphen after it is given up at once, not letter by letter.)
_HYPHENATED = re.compile(r"\b\w++(?:[-\u2010]\w++)+")
_HYPHEN = re.compile(r"[-\u2010]")
# What a query is read as outside CJK runs: words, each with the hyphenated ones whole.
_QUERY_WORD = re.compile(r"\w++(?:[-\u2010]\w++)*")


def _cjk_tokens(run: str) -> list[str]:
    return [*run, *(run[i:i + 2] for i in range(len(run) - 1))]


def index_terms(*texts: str) -> str:
    """The indexed form of some text: CJK runs as characters then pairs, the rest as is."""
    parts = []
    for text in texts:
        normal = as_read(text)
        last = 0
        for match in _CJK_RUN.finditer(normal):
            parts.extend(_latin_terms(normal[last:match.start()]))
            parts.extend(_cjk_tokens(match.group()))
            last = match.end()
        parts.extend(_latin_terms(normal[last:]))
    return " ".join(p for p in parts if p.strip())


def _latin_terms(text: str) -> list[str]:
    """Text outside CJK runs, folded, then its hyphenated words written as one."""
    if not _HYPHEN.search(text):  # (most text: spared the scan for hyphenated words)
        return [_folded(text)]
    return [_folded(text), *(_folded(_HYPHEN.sub("", m.group()))
                             for m in _HYPHENATED.finditer(text))]


# How each dialect writes "these words in a row", "a word starting so", AND and OR. A
# phrase is (words, is_prefix): a CJK run is its overlapping pairs as one phrase, a Latin
# word a prefix. Each word is quoted, so nothing a visitor types is read as query syntax.
_FTS5 = {"quote": lambda w: '"' + w.replace('"', '""') + '"', "prefix": "*", "and": " AND ",
         "or": " OR ", "nothing": '""'}
# PostgreSQL: a to_tsquery('simple', ...) text; '' holds no lexeme, so it matches nothing.
_TSQUERY = {"quote": lambda w: "'" + w.replace("\\", "\\\\").replace("'", "''") + "'",
            "phrase": " <-> ", "prefix": ":*", "and": " & ", "or": " | ", "nothing": ""}
_SYNTAX = {"sqlite": _FTS5, "postgresql": _TSQUERY}

PREFIX_FROM = 3  # letters a search word needs to match longer words too ("backup": "backups")

# A MATCH expression that matches nothing: for a query of punctuation only.
MATCHES_NOTHING = _FTS5["nothing"]


# Some words in a row, the last one a prefix or not; a term of a query is alternatives,
# one of which must match, each of them such rows that must all match.
Phrase = tuple[list[str], bool]
Term = list[list[Phrase]]


def _query_terms(q: str) -> list[Term]:
    terms: list[Term] = []
    normal = as_read(q)
    last = 0
    pieces: list[tuple[str, bool]] = []
    for match in _CJK_RUN.finditer(normal):
        pieces.append((normal[last:match.start()], False))
        pieces.append((match.group(), True))
        last = match.end()
    pieces.append((normal[last:], False))
    for text, is_cjk in pieces:
        if is_cjk:
            terms.append([[([text[i:i + 2] for i in range(len(text) - 1)] or [text], False)]])
            continue
        for match in _QUERY_WORD.finditer(text):
            words = _WORD.findall(_folded(match.group()))
            if _HYPHEN.search(match.group()) and len(words) > 1:
                # written as one word, or as its parts, however they were joined ("x86_64",
                # "2024年10月01日": not always in a row)
                joined = "".join(words)
                terms.append([[([joined], _prefix(joined))],
                              [([word], _prefix(word)) for word in words]])
            else:
                terms.extend([[([word], _prefix(word))]] for word in words)
    return terms[:MAX_QUERY_TERMS]


def _prefix(word: str) -> bool:
    # a word of one or two letters ("C" of "C++", "Go") is a whole word: as a prefix it
    # would match every word that starts with it ("coffee", "good")
    return len(word) >= PREFIX_FROM


def match_query(q: str, dialect: str = "sqlite") -> str | None:
    """The search expression requiring every term of ``q`` (an FTS5 MATCH string, or a
    tsquery text on PostgreSQL); None when ``q`` is blank, the dialect's match-nothing
    expression when it holds no word at all."""
    if not q.strip():
        return None
    syntax = _SYNTAX[dialect]
    rendered = []
    for alternatives in _query_terms(q):
        either = [_all_of(phrases, dialect) for phrases in alternatives]
        rendered.append(either[0] if len(either) == 1 else f"({syntax['or'].join(either)})")
    return syntax["and"].join(rendered) or syntax["nothing"]


def _all_of(phrases: list[Phrase], dialect: str) -> str:
    joined = _SYNTAX[dialect]["and"].join(_rendered(words, is_prefix, dialect)
                                          for words, is_prefix in phrases)
    return f"({joined})" if len(phrases) > 1 else joined


def _rendered(words: list[str], is_prefix: bool, dialect: str) -> str:
    """Words in a row, the last a prefix when ``is_prefix``, in the dialect's syntax."""
    syntax = _SYNTAX[dialect]
    quote, tail = syntax["quote"], syntax["prefix"] if is_prefix else ""
    if dialect == "sqlite":  # FTS5 quotes a whole phrase once; its * is on the last word
        return quote(" ".join(words)) + tail
    phrase = syntax["phrase"].join([*map(quote, words[:-1]), quote(words[-1]) + tail])
    return f"({phrase})" if len(words) > 1 else phrase


def searched_listing(conn: Connection, listings: tuple[str, str], q: str) -> tuple[str, str | None]:
    """Which of a listing's two named queries runs for ``q`` (``listings``: without and
    with the search filter, see ``db/queries.py``), and its ``:match``."""
    match = match_query(q, dialect_of(conn))
    listing, searching = listings
    return (listing if match is None else searching), match


def index_topic(conn: Connection, topic_id: str, title: str, description: str) -> None:
    """Write (or rewrite) one question's entry, inside the caller's transaction."""
    conn.execute(Q.search_forget_topic, {"id": topic_id})
    conn.execute(Q.search_index_topic, {"id": topic_id, "terms": index_terms(title, description)})


def index_missing(conn: Connection) -> int:
    """Index every question the index lacks (a database from before search existed, or a
    migration emptied it); a second process starting meanwhile waits, then finds none."""
    conn.execute(Q.lock_search_index)
    rows = conn.execute(Q.list_topics_missing_from_search).fetchall()
    for row in rows:
        conn.execute(Q.search_index_topic,
                     {"id": row["id"], "terms": index_terms(row["title"], row["description"])})
    return len(rows)


# --- the all-questions page ------------------------------------------------------------

BROWSE_PAGE_SIZE = 20
_ABOVE_EVERY_ROW = 2**62
# sort -> (named queries without and with a search, the cursor's fields after the topic
# id, how a row gives them)
BROWSE_SORTS = {
    "new": ((Q.list_browse_newest, Q.list_browse_newest_searching), ("before_created",),
            lambda r: (r["created"],)),
    "answers": ((Q.list_browse_most_answers, Q.list_browse_most_answers_searching),
                ("before_count", "before_created"),
                lambda r: (r["message_count"], r["created"])),
    "recent": ((Q.list_browse_recently_answered, Q.list_browse_recently_answered_searching),
               ("before_answer",), lambda r: (r["last_answer_at"],)),
}
_CURSOR = re.compile(rf"^(\d{{1,19}}(?:\.\d{{1,19}})?)\.([{ID_CHARS}]{{1,64}})$")


def _cursor_params(sort: str, cursor: str) -> dict[str, object]:
    """The keyset position a cursor names; a missing or hand-broken one starts at the top."""
    _, fields, _ = BROWSE_SORTS[sort]
    match = _CURSOR.fullmatch(cursor)
    numbers = [int(n) for n in match.group(1).split(".")] if match else []
    # past every row is past what a database integer holds (2**63 - 1): no row is there
    if len(numbers) != len(fields) or max(numbers) > _ABOVE_EVERY_ROW:
        return {**{f: _ABOVE_EVERY_ROW for f in fields}, "before_id": ""}
    return {**dict(zip(fields, numbers)), "before_id": match.group(2)}


def _next_cursor(sort: str, row: Row) -> str:
    _, _, key = BROWSE_SORTS[sort]
    return ".".join(str(v) for v in key(row)) + "." + row["id"]


def browse(conn: Connection, *, q: str = "", community: str | None = None,
           status: str | None = None, intent: str | None = None, answered: bool | None = None,
           card: bool | None = None, sort: str = "new", cursor: str = "") -> dict[str, object]:
    """One page of every community's questions (public fields only), filtered and sorted.

    ``next`` is the cursor of the following page, or None on the last one.
    """
    listings, _, _ = BROWSE_SORTS[sort]
    query, match = searched_listing(conn, listings, q)
    params = {
        **_cursor_params(sort, cursor), "community": community, "status": status,
        "intent": intent, "match": match, "limit": BROWSE_PAGE_SIZE + 1,
        "answered": None if answered is None else int(answered),
        "card": None if card is None else int(card),
    }
    rows = conn.execute(query, params).fetchall()
    page = rows[:BROWSE_PAGE_SIZE]
    topics = [{
        "id": r["id"], "title": r["title"], "description": r["description"],
        "communityId": r["community_id"], "communityName": r["community_name"],
        "created": r["created"], "messageCount": r["message_count"], "intent": r["intent"],
        "questionVersion": r["version"], "status": r["status"], "author": r["author_name"],
        "lastAnswerAt": r["last_answer_at"] or None, "hasCard": bool(r["has_card"]),
    } for r in page]
    more = len(rows) > BROWSE_PAGE_SIZE
    return {"topics": topics, "next": _next_cursor(sort, page[-1]) if more else None}
