"""Is a word in a text with up to a few characters woven between its own? In linear time.

The secret scan looks for an agent's token written with other letters between its own
("l0b1t2_…"). A regular expression of it (``c1[0-9A-Za-z]{0,4}c2…``) backtracks through every
combination of gap lengths where the text offers several: a text of the token's letters each
written three times took hours for 126 characters. This does the same search bit-parallel,
all positions at once, one character of the word after another.
"""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=256)
def _byte_is(char: int) -> bytes:
    """A translation table: the byte ``char`` to 1, every other byte to 0."""
    return bytes(1 if byte == char else 0 for byte in range(256))


@functools.lru_cache(maxsize=4)
def _byte_is_not(char: int) -> bytes:
    return bytes(0 if byte == char else 1 for byte in range(256))


def any_with_gaps(text: str, words: tuple[str, ...], gap: int, separator: str) -> bool:
    """Whether the ASCII ``text`` holds one of ``words`` with at most ``gap`` characters
    between any two of its own, none of them ``separator`` (a word is never found across
    one)."""
    data = text.encode("ascii")
    # A byte per position, 1 or 0: shifting by 8 bits moves every position on by one.
    open_ = int.from_bytes(data.translate(_byte_is_not(ord(separator))), "little")
    positions: dict[str, int] = {}

    def where(char: str) -> int:
        if char not in positions:
            positions[char] = int.from_bytes(data.translate(_byte_is(ord(char))), "little")
        return positions[char]

    for word in words:
        ends = where(word[0])  # where a match of the word's first characters can end
        for char in word[1:]:
            step = ends << 8  # the very next position
            reach = step
            for _ in range(gap):
                step = (step & open_) << 8  # one more character between
                reach |= step
            ends = reach & where(char)
            if not ends:
                break
        else:
            return True
    return False
