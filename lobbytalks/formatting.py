"""Markdown in question backgrounds and answers, rendered for the pages only.

The JSON APIs return text as it was written; only the pages turn it into HTML. Parsing is
markdown-it-py's CommonMark with raw HTML and headings off (a background or an answer is not
a document with its own titles), an image turned into a link to it labelled with its alt
text (shown, it would load a third party's URL into the reader's browser), bare URLs linked.
nh3 (ammonia) then cleans the result against a short list of tags, so a parser bug cannot
smuggle markup through, and gives every link ``rel="nofollow ugc noopener"``.

Answers cite their sources as ``[S1]``; those become links to the answer's own source list
here, at the token level, so a citation inside a URL or a code span stays text.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable
from html import unescape
from urllib.parse import unquote, urlsplit

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markupsafe import Markup
from .models.citations import SOURCE_REF
from .textrules import RIGHT_TO_LEFT, fold_for_scanning
from .urlpolicy import check_source_url

LINK_REL = "nofollow ugc noopener"
ALLOWED_TAGS = {"p", "br", "strong", "em", "del", "s", "code", "pre", "blockquote", "ul", "ol",
                "li", "a", "hr"}
ALLOWED_ATTRIBUTES = {"a": {"href"}, "ol": {"start"}}
# blocks that may hold right-to-left words, each laid out by its own first letter
_OWN_DIRECTION_BLOCKS = ("paragraph_open", "list_item_open", "blockquote_open")
_ATTRIBUTE_VALUES = {"a": {"class": {"cite"}}, "pre": {"tabindex": {"0"}},
                     **{tag: {"dir": {"auto"}} for tag in ("p", "li", "blockquote")}}
# Words that a reader takes for an address: a scheme, "www." or a dotted name.
_LOOKS_LIKE_AN_ADDRESS = re.compile(
    r"(?i)([a-z][a-z0-9+.-]*://|www\.|[^\s/]+\.[a-z]{2,}(?:[/:]|$))")
# Among other words, only what nobody takes for anything else: a scheme, "www." or a name
# of three parts ("docs.python.org"); "Node.js" in "Node.js docs" is a name, not a site.
_PLAINLY_AN_ADDRESS = re.compile(r"(?i)([a-z][a-z0-9+.-]*://|www\.|[^\s/.]+\.[^\s/.]+\.[a-z]{2,}\b)")
# A bare name is linked only when it is written as an address is: "www.x.org", not the
# file names "main.rs" or "setup.py", which linkify would send to those domains.
_WRITTEN_AS_AN_ADDRESS = re.compile(r"(?i)(https?://|www\.)")


def _link_citations(state: StateCore) -> None:
    """Turn ``[Sn]`` in plain text (not inside a link) into a link to source n."""
    anchor, count = state.env.get("anchor"), state.env.get("sources", 0)
    if not anchor or not count:
        return
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children, depth = [], 0
        for token in block.children:
            depth += token.type == "link_open"
            depth -= token.type == "link_close"
            if token.type != "text" or depth or not _may_cite(token.content):
                children.append(token)
                continue
            children.extend(_split_citations(token.content, anchor, count))
        block.children = children


def _images_as_links(state: StateCore) -> None:
    """``![alt](url)`` becomes a link to url reading alt (url when alt is empty); inside a
    link's words it is those words only, as a link within a link would leave the outer one
    unvetted (``[docs ![.](https://a.org/x.png)](https://elsewhere.example)``)."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children, depth = [], 0
        for token in block.children:
            depth += (token.type == "link_open") - (token.type == "link_close")
            if token.type != "image":
                children.append(token)
                continue
            src = str(token.attrs.get("src", ""))
            label = token.children or [_text(src)]
            if depth:
                children += label
                continue
            children += [Token("link_open", "a", 1, attrs={"href": src}), *label,
                         Token("link_close", "a", -1)]
        block.children = children


def _vet_links(state: StateCore) -> None:
    """A link stays a link only to where a source could be (``urlpolicy``: public https,
    no user info, no secrets) or to an e-mail address; others keep their words as text.
    Nor does one whose words would mislead a reader: a citation ("[S1]", which then cites
    the answer's own source), an address on another host than the link's, or any address
    on an internationalised host (a look-alike of a known name in other scripts)."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        openings: list[int] = []  # a stack: each link is vetted, even one inside another
        for token in block.children:
            if token.type == "link_open":
                openings.append(len(children))
            elif token.type == "link_close" and openings:
                opened = openings.pop()
                link = children[opened]
                label = "".join(t.content for t in children[opened + 1:])
                href = str(link.attrs.get("href", ""))
                if link.markup == "linkify" and href.startswith("http://") and \
                        not label.lower().startswith("http://"):
                    href = link.attrs["href"] = "https" + href[len("http"):]  # a bare "www.x.org"
                bare = link.markup == "linkify" and not href.startswith("mailto:") and \
                    not _WRITTEN_AS_AN_ADDRESS.match(label)
                if bare or not _honest_link(href, label):
                    del children[opened]  # the opening; its words stay, as text
                    continue
                children.append(token)
                host = _host_to_show(href, label)
                if host:  # where it leads, whatever its words say ("docs.python.org,")
                    children.append(_text(f" ({host})"))
                continue
            children.append(token)
        block.children = children


def _host_to_show(href: str, label: str) -> str | None:
    """The host a web link leads to, unless its words already show it."""
    if href.startswith("mailto:"):
        return None
    host = urlsplit(href).hostname or ""
    words = fold_for_scanning(label).lower()
    # Only the host itself, or it after "www.": words naming a parent domain do not show
    # who runs the subdomain ("github.io" over attacker.github.io, "co.uk" over evil.co.uk).
    shown = any(host in (_host_in(w), "www." + _host_in(w))
                for w in words.split() if _LOOKS_LIKE_AN_ADDRESS.match(w))
    return None if shown or _names(words, host) else host


def _names(words: str, host: str) -> bool:
    """Whether ``words`` hold ``host`` as a whole name (also amid Chinese: "见sqlite.org"),
    not as the tail of a longer one: "python.org" does not show "thon.org"."""
    return bool(host) and re.search(
        r"(?<![a-z0-9.-])" + re.escape(host) + r"(?![a-z0-9-])", words) is not None


def _honest_link(href: str, label: str) -> bool:
    # As read: what draws nothing and look-alike letters do not make other words of them.
    words = fold_for_scanning(label).strip()
    prose = " ".join(w for w in words.split() if not _LOOKS_LIKE_AN_ADDRESS.match(w))
    if SOURCE_REF.search(prose):  # "[S1]", "[S1] official": a citation to a reader
        return False
    # the words as a whole, and any word among them that can only be an address
    shown = [w for w in {words, *filter(_PLAINLY_AN_ADDRESS.match, words.split())}
             if _LOOKS_LIKE_AN_ADDRESS.match(w)]
    if href.startswith("mailto:"):  # its words may show its own address, no other
        address = unquote(href[len("mailto:"):].split("?", 1)[0]).lower()
        return all(w.lower() in (address, href.lower()) for w in shown)
    try:
        check_source_url(href)
    except ValueError:
        return False
    host = urlsplit(href).hostname or ""
    return not shown or "xn--" not in host and all(_same_site(host, w) for w in shown)


def _same_site(host: str, words: str) -> bool:
    """Whether ``host`` is the one ``words`` name or under it: the link is no lie then,
    though a subdomain's host is still shown after it (``_host_to_show``)."""
    shown = _host_in(words)
    return host == shown or host.endswith("." + shown)


def _host_in(words: str) -> str:
    return (urlsplit(words if "://" in words else f"https://{words}").hostname or "").lower()


def _may_cite(text: str) -> bool:
    return "[S" in text or "[s" in text


def _split_citations(text: str, anchor: str, count: int) -> list[Token]:
    tokens, start = [], 0
    for match in SOURCE_REF.finditer(text):
        n = int(match.group(1))
        if not 1 <= n <= count:
            continue
        tokens.append(_text(text[start:match.start()]))
        opening = Token("link_open", "a", 1, attrs={"href": f"#{anchor}-s{n}", "class": "cite"})
        tokens += [opening, _text(f"[S{n}]"), Token("link_close", "a", -1)]
        start = match.end()
    tokens.append(_text(text[start:]))
    return [t for t in tokens if t.type != "text" or t.content]


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _blocks_take_their_own_direction(state: StateCore) -> None:
    """Text holding right-to-left letters: each paragraph, item and quote gets dir="auto",
    so an English paragraph after a Hebrew one is not laid out right to left with it (the
    block around them can only take one direction)."""
    if not RIGHT_TO_LEFT.search(state.src):
        return
    for token in state.tokens:
        if token.type in _OWN_DIRECTION_BLOCKS:
            token.attrSet("dir", "auto")


def _scrolls_by_keyboard(rule: Callable[..., str]) -> Callable[..., str]:
    """A code block wider than its column scrolls sideways; in the tab order, a keyboard
    can scroll it too (WCAG 2.1.1; Safari does not focus scrolling boxes on its own)."""
    def render(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
        return rule(tokens, idx, options, env).replace("<pre>", '<pre tabindex="0">', 1)
    return render


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": True, "breaks": True})
    md.enable(["linkify", "strikethrough"])
    # no link reference definitions either: a line "[注意]: 不要直接运行" is one, and
    # vanished from the page (a footnote "[^1]: ..." too); written, it shows as written
    md.disable(["heading", "lheading", "reference"])
    md.core.ruler.push("images_as_links", _images_as_links)
    md.core.ruler.push("vet_links", _vet_links)
    md.core.ruler.push("link_citations", _link_citations)
    md.core.ruler.push("blocks_take_their_own_direction", _blocks_take_their_own_direction)
    for block in ("fence", "code_block"):
        md.add_render_rule(block, _scrolls_by_keyboard(md.renderer.rules[block]))
    return md


def _clean(html: str) -> Markup:
    return Markup(nh3.clean(
        html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES,
        tag_attribute_values=_ATTRIBUTE_VALUES, url_schemes={"http", "https", "mailto"},
        link_rel=LINK_REL))


# Rendering is a pure function of its arguments, and listings and question pages render the
# same texts on every request: each rendering is kept, keyed by the text itself, so a cached
# result is only ever handed to a caller that already holds that text (nothing about who may
# read it is cached). The sizes bound the memory: answers up to a few KB, excerpts smaller.
_RENDERED = 1024
_EXCERPTS = 4096


@lru_cache(maxsize=_RENDERED)
def markdown(text: str, *, anchor: str | None = None, sources: int = 0) -> Markup:
    """Block Markdown (paragraphs, lists, quotes, code) as safe HTML."""
    return _clean(_parser().render(text, {"anchor": anchor, "sources": sources}))


@lru_cache(maxsize=_RENDERED)
def markdown_inline(text: str, *, anchor: str | None = None, sources: int = 0) -> Markup:
    """One line of Markdown (emphasis, code, links) for list items and short fields."""
    return _clean(_parser().renderInline(text, {"anchor": anchor, "sources": sources}))


# Where a block (a paragraph, a list item, a heading, a quote, code) starts or ends.
_BLOCK_EDGE = re.compile(r"</?(?:p|li|h[1-6]|blockquote|pre|tr)\b[^>]*>")
# A block ending so reads on into the next; any other ending would run into its words.
_READS_ON = tuple(".!?:;,。！？：；，、…")


@lru_cache(maxsize=_EXCERPTS)
def markdown_text(text: str) -> str:
    """The words of some Markdown without its marks, for one-line excerpts in listings;
    blocks one after the other, with " · " where one does not end as a sentence would
    (list items ran together: "…every node Not on wired")."""
    blocks = (" ".join(unescape(nh3.clean(part, tags=set())).split())
              for part in _BLOCK_EDGE.split(_parser().render(text)))
    line = ""
    for block in filter(None, blocks):
        line += (" " if line.endswith(_READS_ON) else " · ") + block if line else block
    return line
