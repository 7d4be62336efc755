"""Tests for lobbytalks.textrules: lengths, control characters, the display-text rule and
the folded form scanners read. One parametrized table per rule."""
from __future__ import annotations

import shutil
import subprocess
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lobbytalks.textrules import (
    check_display_text,
    for_pages,
    fold_for_scanning,
    has_bidi_controls,
    has_control_chars,
    has_line_separators,
    has_nul,
    has_visible_char,
    js_length,
    js_trim,
)



@pytest.mark.parametrize(("text", "expected"), [
    ("", 0),
    ("abc", 3),
    ("a😀", 3),            # astral plane: a surrogate pair in UTF-16
    ("😀😀", 4),
    ("中文", 2),           # BMP CJK: one unit each
    ("é", 1),
    ("e\u0301", 2),        # combining accent counts separately, as in JS
    ("\U0010ffff", 2),
    ("\ud800", 1),         # a lone surrogate (JSON can carry one): one unit, as in JS
    ("a\udfff😀", 4),
])
def test_js_length_counts_utf16_units(text, expected):
    assert js_length(text) == expected


@given(st.text(st.characters(blacklist_categories=())))
def test_js_length_is_one_unit_per_bmp_code_point_and_two_above(text):
    assert js_length(text) == sum(2 if ord(char) > 0xFFFF else 1 for char in text)


@pytest.mark.parametrize(("text", "expected"), [
    ("plain text", False),
    ("中文，标点。", False),
    ("emoji 😀", False),
    ("tab\there", True),
    ("line\nbreak", True),
    ("carriage\rreturn", True),
    ("nul\x00", True),
    ("bell\x07", True),
    ("escape\x1b[31m", True),
    ("delete\x7f", True),
    ("c1 next line\x85", True),
    ("c1\x9f", True),
    ("zero\u200bwidth", False),     # Cf, not Cc
    ("line\u2028separator", False),  # Zl, not Cc
])
def test_has_control_chars(text, expected):
    assert has_control_chars(text) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("line\nbreak", False),
    ("crlf\r\n", False),
    ("tab\t", False),
    ("plain", False),
    ("nul\x00", True),
    ("vertical tab\x0b", True),
    ("form feed\x0c", True),
    ("escape\x1b", True),
    ("c1\x85", True),
])
def test_has_control_chars_allowing_newlines(text, expected):
    assert has_control_chars(text, allow_newlines=True) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("", False),
    ("abc", False),
    ("a\x00b", True),
    ("\x00", True),
    ("\\x00 written out", False),
])
def test_has_nul(text, expected):
    assert has_nul(text) is expected

# --------------------------------------------------------------------------- display text

BIDI_CONTROLS = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
                 "\u2066", "\u2067", "\u2068", "\u2069"]


@pytest.mark.parametrize("control", BIDI_CONTROLS)
def test_every_bidi_embedding_override_and_isolate_is_found(control):
    assert has_bidi_controls(f"abc{control}def") is True


@pytest.mark.parametrize("text", [
    "plain", "中文", "שלום", "مرحبا",
    "rlm\u200fmark", "lrm\u200emark", "alm\u061cmark",  # marks only nudge neutrals
    "zero\u200bwidth", "",
])
def test_bidi_marks_and_ordinary_text_are_not_controls(text):
    assert has_bidi_controls(text) is False


@pytest.mark.parametrize(("text", "expected"), [
    ("a\u2028b", True), ("a\u2029b", True), ("a\nb", False), ("a\u0085b", False), ("", False),
])
def test_has_line_separators(text, expected):
    assert has_line_separators(text) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("a", True),
    ("中", True),
    ("😀", True),
    ("👨\u200d👩\u200d👧", True),       # ZWJ family
    ("!", True),
    ("1", True),
    ("\u200bx\u200b", True),
    ("", False),
    (" ", False),
    ("\u3000\u00a0", False),            # ideographic and no-break space
    ("\u200b", False),                  # zero-width space
    ("\u200d\u200c\u2060\ufeff", False),  # joiners, word joiner, BOM
    ("\u00ad", False),                  # soft hyphen
    ("\u3164", False),                  # Hangul filler: a "letter" drawn blank
    ("\uffa0\u115f\u1160", False),
    ("\u2800", False),                  # braille blank
    ("\u0301\u0308", False),            # combining marks without a base
    ("\ufe0f", False),                  # variation selector
    ("\U000e0041", False),              # tag character
    ("\u202e\u2066", False),
    # not yet assigned, or private use: drawn (a later Unicode's letter, a font's box or
    # glyph); a fuzzer's contract-valid title was refused as "no visible character"
    ("\U0001545c", True),
    ("\ue000", True),
    ("\U000e0080", False),             # unassigned, but reserved as ignorable
    ("\uffff\ufdd0\U0001fffe", False),  # noncharacters
])
def test_has_visible_char(text, expected):
    assert has_visible_char(text) is expected


@pytest.mark.parametrize(("text", "single_line"), [
    ("查证虾", True),
    ("Claude 🦐", True),
    ("👨\u200d💻 coder", True),          # ZWJ inside an emoji sequence stays allowed
    ("🏳\ufe0f\u200d🌈", True),
    ("می\u200cخواهم", True),             # Persian needs ZWNJ
    ("क्\u200dष", True),                 # Devanagari half form with ZWJ
    ("עברית\u200f", True),               # a right-to-left mark
    ("第一行\n第二行\t缩进", False),      # newlines and tabs in multi-line text
])
def test_display_text_accepts(text, single_line):
    check_display_text(text, single_line=single_line, required=True)


@pytest.mark.parametrize(("text", "single_line", "reason"), [
    *((f"evil{control}gpj.exe", True, "方向") for control in BIDI_CONTROLS),
    ("先给结论\u202e，再给来源", False, "方向"),
    ("name\u2028second", True, "分隔符"),
    ("段落\u2029段落", False, "分隔符"),
    ("tab\tname", True, "控制"),
    ("bell\x07", False, "控制"),
    ("esc\x1b[31m red", False, "控制"),
    ("\u200b", True, "可见"),
    ("\u200b\u200c\u200d", True, "可见"),
    ("\u3164\u3164", True, "可见"),
    ("\u2800", False, "可见"),
    ("\u0301", True, "可见"),
])
def test_display_text_refuses(text, single_line, reason):
    with pytest.raises(ValueError, match=reason):
        check_display_text(text, single_line=single_line, required=True)


def test_optional_display_text_may_be_blank_but_not_disguised():
    check_display_text("", single_line=False, required=False)
    check_display_text("\u200b", single_line=False, required=False)
    with pytest.raises(ValueError, match="方向"):
        check_display_text("\u202e", single_line=False, required=False)


# --------------------------------------------------------------------------- folding


@pytest.mark.parametrize(("text", "expected"), [
    ("AKIA\u200bIOSF", "AKIAIOSF"),
    ("ghp\u2060_abc", "ghp_abc"),
    ("ｇｈｐ＿ＡＢＣ", "ghp_ABC"),            # fullwidth
    ("𝐀𝐊𝐈𝐀", "AKIA"),                       # mathematical bold
    ("A\u0301KIA", "AKIA"),                  # an inserted combining mark
    ("sk\u00ad-\ufeffkey", "sk-key"),
    ("l\U000e0062bt_", "lbt_"),              # tag character
    ("中文、标点。", "中文、标点。"),
    ("café", "cafe"),                        # scanning form only: marks go
    ("plain ascii", "plain ascii"),
    ("lone \ud800 surrogate", "lone \ud800 surrogate"),
])
def test_fold_for_scanning(text, expected):
    assert fold_for_scanning(text) == expected


def test_js_trim_removes_exactly_what_javascripts_trim_removes():
    """Every code point of the BMP, asked of Node itself (a test dependency: the MCP
    TypeScript client runs on it)."""
    node = shutil.which("node")
    assert node is not None, "Node.js is missing: scripts/test.sh installs it"
    script = ("const s = []; for (let c = 0; c < 0x10000; c++) "
              "{ if (String.fromCharCode(c).trim() === '') s.push(c); } console.log(s.join(' '))")
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=30,
                          check=True)
    trimmed_by_js = {chr(int(code)) for code in done.stdout.split()}
    trimmed_here = {char for char in map(chr, range(0x10000)) if js_trim(f"{char}a{char}") == "a"}
    assert trimmed_here == trimmed_by_js
    assert "\ufeff" in trimmed_here and "\x85" not in trimmed_here


@pytest.mark.parametrize("value, shown", [
    ("setup-\u202efdp.exe", "setup-fdp.exe"),
    ("\u2066x\u2069 \u202ay\u202c", "x y"),
    ("Z" + "\u0301" * 80, "Z" + "\u0301" * 3),
    ("Việt Nam ệ̃ café", "Việt Nam ệ̃ café"),   # up to three marks on a letter stay
    # what draws nothing between marks does not end their pile (it stays, the marks go)
    ("Z" + "\u0301\u2060" * 30, "Z" + "\u0301\u2060" * 3 + "\u2060" * 27),
    ("Z" + "\u0301\u0300\u0302\ufe00" * 25, "Z\u0301\u0300\u0302" + "\ufe00" * 25),
    ("a\u00ad" + "\u0301\u00ad" * 5, "a\u00ad" + "\u0301\u00ad" * 3 + "\u00ad" * 2),
    ("\u2764\ufe0f\u200d\U0001f525", "\u2764\ufe0f\u200d\U0001f525"),  # an emoji sequence
    ("ok \u200f\u200e", "ok \u200f\u200e"),     # the one-character marks right-to-left needs
    (42, 42), (None, None),
])
def test_pages_draw_text_without_reordering_controls_or_piled_marks(value, shown):
    assert for_pages(value) == shown


def test_a_long_run_of_what_draws_nothing_is_read_once():
    """From each character of a run of ignorables (U+17B4, U+2060) the run was read to its
    end: quadratic, seconds for a long answer on every view. The bound only catches that."""
    started = time.monotonic()
    run = "\u17b4\u2060" * 30_000
    assert for_pages("Z\u0301" + run) == "Z\u0301" + run  # one mark: nothing piles up
    assert for_pages("Z" + "\u0301" * 5 + run) == "Z" + "\u0301" * 3 + run
    assert time.monotonic() - started < 2


@given(st.text(alphabet="Za\u0301\u0300\u2060\u00ad\u202e", max_size=30))
def test_marks_are_kept_or_dropped_as_the_rule_says(text):
    """No reordering control is left, and no letter keeps more than three marks in a row
    (what draws nothing between them does not end the row)."""
    shown = for_pages(text)
    assert "\u202e" not in shown
    run = 0
    for char in shown:
        if char in "\u0301\u0300":
            run += 1
            assert run <= 3
        elif char not in "\u2060\u00ad":
            run = 0


def test_for_pages_keeps_markup_as_markup():
    from markupsafe import Markup
    drawn = for_pages(Markup("<b>a\u202eb</b>"))
    assert isinstance(drawn, Markup) and drawn == Markup("<b>ab</b>")


def test_citations_are_taken_out_at_once_after_a_long_run_of_spaces():
    from lobbytalks.models.citations import without_source_refs
    started = time.monotonic()
    assert without_source_refs("结论 [S1]，见\t [s2]。") == "结论，见。"
    assert without_source_refs(" \t" * 30_000 + "x") == " \t" * 30_000 + "x"
    assert without_source_refs("a" + " " * 30_000 + "[S1]") == "a"
    assert time.monotonic() - started < 2


def test_a_title_of_a_later_unicodes_letter_is_asked_through_the_api(app):
    """The contract's title is any string of 1-180 characters: one code point this Python's
    Unicode does not know yet (U+1545C) was refused as having nothing visible."""
    from conftest import joined_person
    asker = joined_person(app)
    r = asker.web_post("topic", title="\U0001545c")
    assert r.status_code == 200, r.get_json()
    refused = asker.web_post("topic", title="\u200b\U000e0080")
    assert refused.status_code == 400 and "可见字符" in refused.get_json()["error"]
