"""The words and small pieces of a page: the reader's language, ``t`` and the request's
translator, ``<time>`` elements, and the renderings of list items kept between requests."""
from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Callable
from urllib.parse import urlsplit

from flask import current_app, g, request
from markupsafe import Markup, escape

from .. import i18n, prose
from ..services.lookalikes import reads_as
from ..textrules import CJK_CHARS, RIGHT_TO_LEFT
from ..kept import Kept
from ..runtime import runtime


def lang() -> str:
    """``?lang=`` wins (and is remembered), then the ``lang`` cookie, then the first of the
    site's languages the browser asks for (``Accept-Language``), then Chinese.

    Decided once per request: a page asks for every string it translates."""
    state = g._get_current_object()  # type: ignore[attr-defined]
    code = getattr(state, "page_lang", None)
    if code is None:
        code = state.page_lang = (i18n.normalise_lang(request.args.get("lang"))
                                  or i18n.normalise_lang(request.cookies.get(i18n.LANG_COOKIE))
                                  or _asked_by_the_browser()
                                  or i18n.DEFAULT_LANG)
    return code


def _asked_by_the_browser() -> str | None:
    """The site's language the browser wants most (the highest ``q``; at equal ones a named
    language before ``*``, then the header's order), each tag read by its first part
    (``en-GB`` is English, ``zh-TW`` Chinese); ``*`` is the site's default, and a tag with
    ``q=0`` is not wanted at all. (werkzeug lists ``*`` after every named tag whatever its
    ``q``, so its order alone would let ``*, en;q=0.5`` choose English.)"""
    best: tuple[tuple[float, bool, int], str] | None = None
    for index, (tag, quality) in enumerate(request.accept_languages):
        wildcard = tag == "*"
        code = i18n.DEFAULT_LANG if wildcard else i18n.normalise_lang(
            tag.replace("_", "-").split("-", 1)[0].lower())
        rank = (quality, not wildcard, -index)
        if code and quality > 0 and (best is None or rank > best[0]):
            best = (rank, code)
    return best[1] if best else None


def t(key: str, **values: Any) -> str:
    """Translate, with the numbers in force (``prose.numbers``) filled in; when a value is
    already markup (a <time>), the result is markup too."""
    return translator(lang())(key, **values)


class Translator:
    """``t`` for one language and one set of numbers, with every string's numbers filled
    in once: a page asks for 90-180 strings, and filling each on every request was a
    third of a page's time. Templates get the request's translator itself."""

    __slots__ = ("code", "numbers", "filled")

    def __init__(self, code: str, numbers: dict[str, Any]) -> None:
        self.code, self.numbers = code, numbers
        self.filled = {key: i18n.translate(code, key, **numbers) for key in i18n.STRINGS}

    def __call__(self, key: str, **values: Any) -> str:
        if not values:
            return self.filled.get(key, key)
        markup = any(isinstance(v, Markup) for v in values.values())  # (numbers never are)
        values = {**self.numbers, **values}
        if markup:
            return Markup(escape(i18n.translate(self.code, key))).format(**values)
        return i18n.translate(self.code, key, **values)


# id(numbers) -> its Translator. ``prose.numbers`` gives one dict per settings and
# language and a new one when they change, which retires the old entry here.
_TRANSLATORS: dict[int, Translator] = {}


def translator(code: str) -> Translator:
    numbers = prose.numbers(runtime().settings, code)
    known = _TRANSLATORS.get(id(numbers))
    if known is None or known.numbers is not numbers:
        if len(_TRANSLATORS) > 64:  # apps come and go in tests; a server has one per language
            _TRANSLATORS.clear()
        known = _TRANSLATORS[id(numbers)] = Translator(code, numbers)
    return known


def when(ts: int | None) -> Markup:
    """A <time> element: UTC on the server, turned into local time by the page script."""
    if not ts:
        return Markup(escape(t("common.never")))
    return _time_tag(int(ts))


@lru_cache(maxsize=4096)
def _time_tag(ts: int) -> Markup:
    moment = datetime.fromtimestamp(ts, tz=timezone.utc)
    # Digits and fixed letters only: nothing here needs escaping.
    return Markup(f'<time datetime="{moment:%Y-%m-%dT%H:%M:%SZ}" data-ts="{ts}">'
                  f'{moment:%Y-%m-%d %H:%M} UTC</time>')


def on_day(moment: str) -> Markup:
    """A <time> of the day an ISO 8601 moment falls on (as written, UTC), which the page
    script writes as the reader's language writes a date, as it does every other time."""
    day = escape(moment[:10])
    return Markup(f'<time datetime="{day}" data-day="{day}">{day}</time>')


# Renderings kept per app; a list page draws the same items for every visitor.
FRAGMENTS_KEPT = 4096
FRAGMENTS = "lobbytalks.fragments"


def remembered(macro: Any, *args: Any) -> Markup:
    """``macro(*args)``, rendered once per language and arguments.

    Only for macros whose output is a function of their arguments and the language
    (``topic_item``, ``community_item``): the arguments are the rows the page's queries
    returned for this viewer, so a kept rendering never shows more than a fresh one would.
    An item costs ~0.2 ms to render in Jinja and ~3 µs to look up.
    """
    kept = current_app.extensions.get(FRAGMENTS)
    if kept is None:  # the key says everything the rendering depends on: no lifetime needed
        kept = current_app.extensions[FRAGMENTS] = Kept(FRAGMENTS_KEPT, seconds=math.inf)
    key = (macro.name, lang(), _frozen(args))
    made = kept.get(key)
    if made is None:
        made = macro(*args)
        kept.keep(key, made)
    return made


def _frozen(value: Any) -> Any:
    """A hashable key for template arguments; markup keeps its type (``Markup("<b>")``
    and ``"<b>"`` render differently but compare equal)."""
    if isinstance(value, dict):
        return tuple((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, Markup):
        return (Markup, str(value))
    return value


def host_of(url: str) -> str:
    """The host a link leads to, shown beside words that might name another (a source titled
    "docs.python.org" whose address is elsewhere)."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


_CJK = re.compile(f"[{CJK_CHARS}]")
# kana and hangul: words in these scripts are Japanese and Korean, not Chinese
_OWN_SCRIPTS = ((re.compile("[\u3040-\u30ff]"), "ja"), (re.compile("[\uac00-\ud7af]"), "ko"))
_LATIN_WORD = re.compile("[A-Za-z]{2,}")
# what is in no language: code, link targets and addresses
_NOT_WORDS = re.compile(r"`[^`]*`|\]\([^)]*\)|(?:https?://|www\.)\S+", re.IGNORECASE)
_LETTERS_OF_OTHER_SCRIPTS = re.compile(f"[A-Za-z{CJK_CHARS}]")
_DIR_AUTO = Markup(' dir="auto"')


def lang_of(text: str) -> Markup:
    """``_language_of``'s attribute, with ``dir="auto"`` for words holding letters written
    right to left: the browser then lays out a Hebrew or Arabic title or answer from its
    own first letter (the page's left-to-right direction put its punctuation and numbers
    on the wrong side). Words mostly in such letters claim no language (the script alone
    does not tell Hebrew from Yiddish or Arabic from Persian, and a few Latin words in
    them do not make them English); an English or Chinese sentence quoting one such word
    keeps its own."""
    right_to_left = len(RIGHT_TO_LEFT.findall(text))
    if not right_to_left:
        return _language_of(text)
    if right_to_left >= len(_LETTERS_OF_OTHER_SCRIPTS.findall(text)):
        return _DIR_AUTO
    return _language_of(text) + _DIR_AUTO


def dir_of(text: str) -> Markup:
    """``dir="auto"`` for words holding right-to-left letters, and nothing else: for names
    and texts a page may show in its own words instead (the lobby's), whose language it
    must not claim."""
    return _DIR_AUTO if RIGHT_TO_LEFT.search(text) else Markup("")


def _language_of(text: str) -> Markup:
    """`` lang="…"`` for people's words in the other language than the page's, so that a
    screen reader reads them in theirs (WCAG 3.1.2); "" when they are in the page's. Only
    words that clearly outweigh the page's language are marked (a wrong voice is worse
    than none), code and addresses left out: Chinese on an English page when its
    characters number more than twice the Latin words ("ask 张三 for details" stays
    English), English on a Chinese page when its words outnumber the characters ("用
    SQLite 在线备份" stays Chinese). Text of those characters holding kana or hangul is
    Japanese or Korean, on either page."""
    page = lang()
    if not _CJK.search(text):
        return Markup(' lang="en"') if page == "zh" and _LATIN_WORD.search(text) else Markup("")
    words = _NOT_WORDS.sub(" ", text) if "`" in text or "/" in text or "www." in text else text
    characters, latin = len(_CJK.findall(words)), len(_LATIN_WORD.findall(words))
    if page == "zh" and latin > characters:
        return Markup(' lang="en"')
    if characters <= (2 * latin if page == "en" else latin):
        return Markup("")
    own = next((code for script, code in _OWN_SCRIPTS if script.search(words)), "zh")
    return Markup("") if own == page else Markup(' lang="{}"').format(i18n.HTML_LANG.get(own, own))


def in_own_lang(text: str, *, isolated: bool = False) -> Markup:
    """``text`` for a sentence of the page's: in a span in its own language or direction
    when that is not the page's (``lang_of``); ``isolated``, in a ``<bdi>``, which also sets
    its direction apart from the words around it (a title a sentence quotes)."""
    other = lang_of(text)
    if not other:
        return Markup.escape(text)
    return Markup("<{0}{1}>{2}</{0}>").format("bdi" if isolated else "span", other, text)


def day(ts: int) -> str:
    return datetime.fromtimestamp(int(ts), tz=timezone.utc).strftime("%Y-%m-%d")


def distinct_labels(items: list[dict[str, Any]], extras: list[Callable[[dict[str, Any]], str]]
                    ) -> dict[str, str]:
    """``{id: label}``; items sharing a name get as many extras as it takes to differ.

    Names need not be unique (the protocol allows two communities, or two of one person's
    agents, to share one), so a list that shows only names could not be told apart; nor
    could names that differ only in case, spacing, punctuation or look-alike letters."""
    labels = {item["id"]: item["name"] for item in items}
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in items:  # names that read alike too: "Rust Fans", "rust  fans", "Rust.Fans"
        groups.setdefault(reads_as(item["name"]), []).append(item)
    for same in (g for g in groups.values() if len(g) > 1):
        # As few extras as it takes for every label in the group to differ (all if none do).
        shown = next((k for k in range(1, len(extras) + 1)
                      if len({tuple(e(i) for e in extras[:k]) for i in same}) == len(same)),
                     len(extras))
        for item in same:
            labels[item["id"]] = " · ".join([item["name"], *(e(item) for e in extras[:shown])])
    return labels
