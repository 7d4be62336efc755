"""The request's own token in disguise: what a model talked into leaking the token it holds
would print to slip past a search for the token's shape.

Only the request carrying the token can tell (``screening.refuse_own_token``), and the
connector looks for it in what its harness wrote (``connector.scrub``). Looked for: the
token as written, spelt out with anything between its letters and digits (spaces, dashes,
line breaks, markup, invisible characters, accents), in fullwidth or other compatibility
forms or Cyrillic and Greek look-alikes, backwards or in ROT13, with characters woven
between its own, whole or in parts, with or without its public prefix; and what follows
that prefix as hex, base64, base32 or base85, in any case where the encoding has none,
whole or in parts, also written byte by byte (``0x6a, 0x4b``, ``\\x6a``, ``%6a``, HTML
character references, decimal, octal or binary bytes).
"""
from __future__ import annotations

import base64
import functools
import html
import re
import unicodedata
from typing import Any, Iterator

from .gapped import any_with_gaps
from .secrets_scan import SEPARATOR, strings_in
from .textrules import LATIN_LOOKALIKES

__all__ = ["holds_disguised", "written_forms"]

# Everything but ASCII letters, digits and the separator between strings: what is left of
# a text once whatever was put between a secret's characters is taken out.
_NOT_ALNUM = re.compile(r"[^0-9A-Za-z\x00]+")
# Taken out before the compatibility decomposition, only to spare it work: ASCII that is
# not a letter or digit, and Chinese characters (which decompose to nothing ASCII).
_NOT_ALNUM_NOR_FOLDING = re.compile(r"[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f"
                                    r"\u3400-\u4dbf\u4e00-\u9fff]+")
_SHORTEST_DISGUISED = 16  # a secret's letters and digits; tokens have far more
# A secret's public prefix ("lbt_"): letters and an underscore anyone may know. What
# follows it is the secret, and encoded alone it shares nothing with the prefix's encoding.
_PUBLIC_PREFIX = re.compile(r"[a-z]{2,8}_")
_ROT13 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                       "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm")
_WOVEN_GAP = 4  # letters or digits that may stand between two of a form's characters
# A secret printed in parts ("lbt_FKXm… and …2Y") is found by its pieces: consecutive
# slices of a form, so that any run of 2n-1 of its characters holds a whole one. Printing
# it in runs short enough to slip through takes more than half a dozen parts. An encoded
# form's pieces are longer: a hash or a commit id in an answer is hex or base64 too.
_PIECE, _ENCODED_PIECE = 6, 12
# Byte by byte: the marks before each byte (0x6a, \x6a, \u006a), taken out so that the
# hex reads as one run again; and runs of bytes written as numbers (at least 8, so that a
# token in rows is found row by row): decimal ([106, 75, ...], zero-padded too), octal
# (\152, 0o152, 0152) or binary (01101010, 0b1101010). A run is read in every base its
# digits allow: a wrong reading decodes to nothing that holds the token.
_BYTE_MARKS = re.compile(r"(?i)0x|\\x|\\u00")
_NUMBER = r"(?:\\|0[bo])?\d{1,8}"
_NUMBER_RUN = re.compile(rf"(?<![\w.]){_NUMBER}(?:[^\d\x00]{{1,8}}{_NUMBER}){{7,}}(?![\w.])",
                         re.IGNORECASE)
_DIGITS = re.compile(r"(?i)(?:\\|0[bo])?(\d+)")


class _Forms:
    """What a secret is looked for as: ``exact`` forms match as written (the letters and
    digits, turned four ways, then base64), ``caseless`` ones in any case (hex, base32)."""

    def __init__(self, secret: str) -> None:
        # what follows the public prefix: a text holding the whole secret holds it too, and
        # one holding it alone gives the whole secret away all the same
        prefix = _PUBLIC_PREFIX.match(secret)
        body = secret[prefix.end() if prefix else 0:]
        plain = _NOT_ALNUM.sub("", body)
        rot13 = plain.translate(_ROT13)
        self.turned = (plain, plain[::-1], rot13, rot13[::-1])
        raw = body.encode()
        self.exact = (self.turned + _encoded(raw, base64.b64encode, 3, 4)
                      + _encoded(raw, base64.b85encode, 4, 5)
                      + _encoded(raw, base64.a85encode, 4, 5))
        base32 = _encoded(raw, base64.b32encode, 5, 8)
        self.caseless = (raw.hex(), *(form.lower() for form in base32))
        self.exact_pieces = _slices(self.turned, _PIECE) + _slices(self.exact[4:], _ENCODED_PIECE)
        self.caseless_pieces = _slices(self.caseless, _ENCODED_PIECE)

    def in_text(self, compact: str) -> bool:
        lowered = compact.lower()
        return (any(form in compact for form in self.exact)
                or any(form in lowered for form in self.caseless)
                or any(piece in compact for piece in self.exact_pieces)
                or any(piece in lowered for piece in self.caseless_pieces)
                or any_with_gaps(compact, self.turned, _WOVEN_GAP, SEPARATOR))


def _encoded(raw: bytes, encode: Any, group: int, chars: int) -> tuple[str, ...]:
    """``raw`` encoded wherever it starts in a group of ``group`` bytes (``chars`` letters
    each), without the first and last group, which depend on what is around it."""
    forms = []
    for shift in range(group):
        text = encode(b"\0" * shift + raw).decode()
        forms.append(_NOT_ALNUM.sub("", text[chars if shift else 0:-chars]))
    return tuple(forms)


def _slices(forms: tuple[str, ...], size: int) -> tuple[str, ...]:
    return tuple(form[i:i + size] for form in forms for i in range(0, len(form) - size + 1, size))


@functools.lru_cache(maxsize=64)
def _forms(secret: str) -> _Forms:
    return _Forms(secret)


def written_forms(secret: str) -> tuple[str, ...]:
    """The ways ``secret`` may stand in a text as one run, longest first: as written,
    backwards, in ROT13 and both, and the forms ``holds_disguised`` looks for (its letters
    and digits alone; hex, base64 and base32 in their usual case). What a text holds in any
    of them can be replaced."""
    forms = _forms(secret)
    rot13 = secret.translate(_ROT13)
    found = {secret, secret[::-1], rot13, rot13[::-1], *forms.exact, *forms.caseless,
             *(form.upper() for form in forms.caseless)}
    return tuple(sorted((form for form in found if form), key=len, reverse=True))


def holds_disguised(values: Any, secret: str) -> bool:
    """Whether a string in ``values`` (a str, or nested dicts and lists as
    ``secrets_scan.find_secret_in`` reads them) holds ``secret`` in one of the disguises
    this module names. Each string on its own: two that happen to meet are not one text."""
    if not secret:
        return False
    # All the strings at once, the separator kept between them so that no form is found
    # across two.
    joined = SEPARATOR.join(strings_in(values))
    forms = _forms(secret)
    if len(forms.turned[0]) < _SHORTEST_DISGUISED:
        return secret in joined
    return any(forms.in_text(_compact(view)) for view in _views(joined))


def _views(joined: str) -> Iterator[str]:
    """The text, and what it reads as once the byte-by-byte writings are undone (each only
    where its marks occur)."""
    yield joined
    if "&" in joined:
        yield html.unescape(joined)
    if _BYTE_MARKS.search(joined):
        yield _BYTE_MARKS.sub("", joined)
    runs = [_DIGITS.findall(run) for run in _NUMBER_RUN.findall(joined)]
    for base in (10, 8, 2):
        decoded = [_bytes_of(numbers, base) for numbers in runs]
        if any(decoded):
            yield SEPARATOR.join(decoded)


def _bytes_of(numbers: list[str], base: int) -> str:
    """The bytes a run of numbers spells in ``base`` ("" where its digits do not fit it)."""
    try:
        values = [int(n, base) for n in numbers]
    except ValueError:
        return ""
    return bytes(v for v in values if v < 256).decode("latin-1")


def _compact(text: str) -> str:
    """Letters and digits alone. NFKD, not the scanners' fold: a letter and an accent it
    would compose into one non-ASCII letter stay apart, and the accent goes with the rest."""
    if not text.isascii():
        text = unicodedata.normalize("NFKD", _NOT_ALNUM_NOR_FOLDING.sub("", text)
                                     ).translate(LATIN_LOOKALIKES)
    return _NOT_ALNUM.sub("", text)
