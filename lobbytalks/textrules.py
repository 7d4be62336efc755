"""Framework-free rules for text people and agents type: lengths, control characters, the
characters that make text display differently from what it holds, and the folded form the
secret scanner and the URL policy read.

Pure functions of their argument, no I/O. Predicates return ``bool`` and never raise for a
str; :func:`check_display_text` raises ``ValueError`` with a short message for people.
"""
from __future__ import annotations

import re
import unicodedata

__all__ = [
    "js_length", "js_trim", "has_control_chars", "has_nul",
    "has_bidi_controls", "has_line_separators", "has_visible_char", "check_display_text",
    "fold_for_scanning", "LATIN_LOOKALIKES", "for_pages", "HTTP_WHITESPACE",
]

# What may surround a header's value (RFC 9110 5.6.3): str.strip() also takes NBSP and NEL,
# which a latin-1 header can carry, so "2025-06-18\xa0" passed for a version it is not.
HTTP_WHITESPACE = " \t"


def js_length(text: str) -> int:
    """Length in UTF-16 code units, like JavaScript's ``String.length`` ("a😀" -> 3).

    Limits are shared with browser forms, which count this way. Never raises for a str.
    """
    if text.isascii():
        return len(text)
    # Code points above the BMP take a surrogate pair in UTF-16 (four bytes); a lone
    # surrogate, which JSON can carry, counts as the one unit it is in JavaScript.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


# What JavaScript's String.prototype.trim() removes (ECMA-262's WhiteSpace and
# LineTerminator): tab, LF, VT, FF, CR, the Zs spaces, U+2028, U+2029 and U+FEFF. Python's
# str.strip() differs both ways: it also removes U+001C-U+001F and U+0085, and keeps U+FEFF.
JS_TRIMMED = ("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
              "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


def js_trim(text: str) -> str:
    """``text`` trimmed as JavaScript's ``trim()`` trims it: a minimum "after trimming" is
    the protocol's, counted the way its own server counts. Never raises for a str."""
    return text.strip(JS_TRIMMED)


_NEWLINES_AND_TAB = frozenset("\n\r\t")


def has_control_chars(text: str, *, allow_newlines: bool = False) -> bool:
    """True if ``text`` holds a Unicode control character (category Cc: C0, DEL, C1).

    With ``allow_newlines``, ``\\n``, ``\\r`` and ``\\t`` are allowed (multi-line fields).
    Never raises for a str.
    """
    for char in text:
        if unicodedata.category(char) != "Cc":
            continue
        if allow_newlines and char in _NEWLINES_AND_TAB:
            continue
        return True
    return False


def has_nul(text: str) -> bool:
    """True if ``text`` contains U+0000, which SQLite and C APIs may truncate at."""
    return "\x00" in text


# Embeddings, overrides (U+202A-U+202E) and isolates (U+2066-U+2069) reorder everything up
# to the next pop: "Trojan Source" text that reads differently from what it holds. The
# single-character marks (LRM, RLM, ALM) only nudge neutral characters and stay allowed,
# as right-to-left writers need them.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# U+2028/U+2029 break a line where a single-line field promises none, and older
# JavaScript engines end a string literal there; "\n" is the one line break we take.
_LINE_SEPARATORS = frozenset("\u2028\u2029")


def has_bidi_controls(text: str) -> bool:
    """True if ``text`` holds a bidi embedding, override or isolate character."""
    return not _BIDI_CONTROLS.isdisjoint(text)


def has_line_separators(text: str) -> bool:
    """True if ``text`` holds U+2028 LINE SEPARATOR or U+2029 PARAGRAPH SEPARATOR."""
    return not _LINE_SEPARATORS.isdisjoint(text)


# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): code points that
# render as nothing, among them zero-width spaces and joiners, variation selectors, tag
# characters and the Hangul fillers (which are letters by category, yet blank).
_DEFAULT_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
# Blank by design although neither ignorable nor a space: BRAILLE PATTERN BLANK.
_BLANK_SYMBOLS = frozenset("\u2800")


# The ranges above as the inside of a regular expression's character class.
_IGNORABLE_CLASS = "".join(
    f"{re.escape(chr(low))}-{re.escape(chr(high))}" for low, high in _DEFAULT_IGNORABLE_RANGES)
_DEFAULT_IGNORABLE = re.compile(f"[{_IGNORABLE_CLASS}]")


def _is_default_ignorable(char: str) -> bool:
    return _DEFAULT_IGNORABLE.match(char) is not None


def _is_invisible(char: str) -> bool:
    """Format characters and default-ignorable code points: present, but drawn as nothing."""
    return unicodedata.category(char) == "Cf" or _is_default_ignorable(char)


def _is_visible(char: str) -> bool:
    # Letters, numbers, punctuation and symbols draw something; marks only decorate a
    # base character, and separators, controls and format characters draw nothing. A
    # private-use or not yet assigned code point draws a glyph of its own or a font's box
    # (a later Unicode's letter, which the contract's strings may carry), unless Unicode
    # reserves it as ignorable or as a noncharacter.
    category = unicodedata.category(char)
    if category in ("Co", "Cn"):
        code = ord(char)
        return not (_is_default_ignorable(char) or 0xFDD0 <= code <= 0xFDEF
                    or code & 0xFFFE == 0xFFFE)
    return category[0] in "LNPS" and char not in _BLANK_SYMBOLS and not _is_default_ignorable(char)


def has_visible_char(text: str) -> bool:
    """True if at least one character of ``text`` draws something on screen."""
    return any(_is_visible(char) for char in text)


# What the pages never draw as written: the reordering controls above (an answer keeps what
# its agent wrote, "setup-\u202efdp.exe" shown as "setup-exe.pdf" on the page otherwise),
# and combining marks past the third on one letter, which pile up out of their line into
# the text above ("Z" under 80 accents); Vietnamese, the most a letter carries here, uses two.
_COMBINING = "\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_MARKS_KEPT = 3
_IS_COMBINING = re.compile(f"[{_COMBINING}]")
# What draws nothing between marks (U+2060, a soft hyphen, a variation selector: the default
# ignorables) does not end their pile on screen: a run of marks counts across it. A run is
# read from its start only (from each of its characters, a long run was read to its end:
# quadratic), once the reordering controls, ignorables themselves, are gone.
_PILED_MARKS = re.compile(
    f"(?<![{_COMBINING}{_IGNORABLE_CLASS}])[{_COMBINING}{_IGNORABLE_CLASS}]*[{_COMBINING}]"
    f"(?:[{_IGNORABLE_CLASS}]*[{_COMBINING}]){{{_MARKS_KEPT},}}[{_IGNORABLE_CLASS}]*")
_WITHOUT_BIDI_CONTROLS = dict.fromkeys(map(ord, _BIDI_CONTROLS))


# Either kind at all (a mark alone is no pile: the full pattern decides).
_SUSPECT = re.compile(f"[{''.join(sorted(_BIDI_CONTROLS))}{_COMBINING}]")


def _as_drawn(match: re.Match) -> str:
    """Of a run of marks, the first three and what draws nothing."""
    kept, out = 0, []
    for char in match.group():
        if _IS_COMBINING.match(char):
            kept += 1
            if kept > _MARKS_KEPT:
                continue
        out.append(char)
    return "".join(out)


def for_pages(value: object) -> object:
    """A value as a page shows it (Jinja's ``finalize``): text without reordering controls
    or piled-up marks; anything else, and text without them, as it is. Markup stays
    Markup: removing characters that are no HTML syntax cannot make markup of text."""
    if not isinstance(value, str) or value.isascii() or _SUSPECT.search(value) is None:
        return value  # the common case, one pass in C
    drawn = _PILED_MARKS.sub(_as_drawn, str.translate(value, _WITHOUT_BIDI_CONTROLS))
    return type(value)(drawn) if hasattr(value, "__html__") else drawn


def refuse_disguises(text: str) -> str:
    """``text``, unless it holds what turns the text around it or splits it where nothing
    shows: bidi embedding/override/isolate controls, U+2028/U+2029.
    :raise ValueError: naming which."""
    if has_bidi_controls(text):
        raise ValueError("不能包含改变文字方向的控制字符")
    if has_line_separators(text):
        raise ValueError("不能包含 Unicode 行或段落分隔符")
    return text


def check_display_text(text: str, *, single_line: bool, required: bool) -> None:
    """The rule for text shown to other people (names, titles, perspectives, descriptions).

    Refuses bidi embedding/override/isolate controls and U+2028/U+2029 everywhere, control
    characters other than newline and tab in multi-line text, and -- when the field must
    say something (``required``) -- text with no visible character, such as only
    zero-width spaces. Zero-width joiners inside emoji or Indic words stay allowed.
    :raise ValueError: naming the rule that failed.
    """
    refuse_disguises(text)
    if has_control_chars(text, allow_newlines=not single_line):
        raise ValueError("不能包含控制字符")
    if required and not has_visible_char(text):
        raise ValueError("至少需要一个可见字符")


_SCAN_DROPPED_CATEGORIES = frozenset({"Mn", "Me"})
_MAX_CACHED_CODE_POINTS = 65_536


class _ScanDropTable(dict):
    """A ``str.translate`` table deleting invisible characters and combining marks, each
    code point judged once and remembered: the per-character work then runs in C, about
    10x faster on Chinese text than judging every character in Python. Bounded, so text
    cycling through all of Unicode cannot grow it without limit."""

    def __missing__(self, code: int) -> int | None:
        char = chr(code)
        dropped = _is_invisible(char) or unicodedata.category(char) in _SCAN_DROPPED_CATEGORIES
        verdict = None if dropped else code
        if len(self) < _MAX_CACHED_CODE_POINTS:
            self[code] = verdict
        return verdict


_SCAN_DROP_TABLE = _ScanDropTable()
# Cyrillic and Greek letters drawn like Latin ones, read as those by the scanners (NFKC
# leaves them alone): "AKI\u0410…" with a Cyrillic A is still an AWS key, "t\u043eken" a
# token parameter. Only letters no reader tells apart from the Latin ones.
LATIN_LOOKALIKES = str.maketrans("АВЕКМНОРСТХУІЈЅаеорсухіјѕһԁԛԝ" "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοινκ",
                                 "ABEKMHOPCTXYIJSaeopcyxijshdqw" "ABEZHIKMNOPTYXoivk")
_SCAN_DROP_TABLE.update(LATIN_LOOKALIKES)


def visible_only(text: str) -> str:
    """``text`` without the characters that draw nothing (zero-width space, soft hyphen,
    BOM, combining grapheme joiner...): what two names that must differ are compared on."""
    return "".join(char for char in text if not _is_invisible(char))


# Characters written without spaces between words: kana, CJK ideographs and Hangul (search
# indexes their runs by pairs; pages mark them as Chinese on an English page).
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
# Letters written right to left (pages give the words holding them dir="auto"): Hebrew,
# Arabic, Syriac, Thaana, N'Ko, Samaritan, Mandaic and their presentation forms, and the
# right-to-left scripts beyond the first plane (Adlam, Hanifi Rohingya, ...).
RIGHT_TO_LEFT = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc"
                           "\U00010800-\U00010fff\U0001e800-\U0001efff]")


def as_read(text: str) -> str:
    """``text`` as people read it, width and case aside ("ＴＨＥ Lobby" -> "the lobby"):
    what search matches on and what two names must not share."""
    return unicodedata.normalize("NFKC", text).casefold()


def fold_for_scanning(text: str) -> str:
    """``text`` the way a pattern matcher should read it: compatibility forms folded
    (fullwidth "ＡＫＩＡ" -> "AKIA"), invisible characters and combining marks dropped
    ("AKIA\\u200bIOSF..." -> "AKIAIOSF..."), and Cyrillic or Greek look-alikes of Latin
    letters read as those, so none of them hides a secret from a scanner.

    For matching only: the text people stored is never changed. Never raises for a str.
    """
    if text.isascii():  # nothing to fold: the common case, kept cheap
        return text
    # NFKD first, so a mark inserted after a letter comes apart from it instead of being
    # composed into a new letter; NFKC at the end puts ordinary text back together.
    kept = unicodedata.normalize("NFKD", text).translate(_SCAN_DROP_TABLE)
    return unicodedata.normalize("NFKC", kept)
