"""Which new passwords are refused as too easy to guess, however long they are.

NIST SP 800-63B asks a service to refuse new passwords that are commonly used or expected:
runs of repeated or sequential characters, context-specific words (the site's name, the
username) and those on lists of common passwords. The list here is short and stands for its
kind: a common word or name with digits or symbols after it ("Password123!", "summer2024"),
also with the usual letter swaps ("P@ssw0rd1"). Everything else a person types is theirs.

Only passwords chosen through LobbyTalks' own actions are checked (changing one, resetting it
by mail, the operator's reset); logins never are, so a password chosen before this rule still
logs in. Registering is the protocol's action, which promises any password of 10–128
characters: there the rule is the page's advice, not a refusal.
"""
from __future__ import annotations

from .errors import ApiError

# Fewer different characters than this, once the username and the site's name are taken
# out, is a repetition ("aaaaaaaaaa", "abcabcabca", "alice11111").
MIN_DISTINCT = 5
# the alphabet, the digits, and a keyboard's rows (with their punctuation), across and down
_RUNS = ("01234567890123456789", "abcdefghijklmnopqrstuvwxyz", "`1234567890-=", "~!@#$%^&*()_+",
         "qwertyuiop[]\\", "asdfghjkl;'", "zxcvbnm,./", "qwertyuiopasdfghjklzxcvbnm",
         "1q2w3e4r5t6y7u8i9o0p", "1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p",
         "qazwsxedcrfvtgbyhnujmikolp")
RUNS = _RUNS + tuple(run[::-1] for run in _RUNS)
SITE_WORDS = ("lobbytalks", "xiachedan", "虾扯淡")
COMMON_WORDS = frozenset((
    "password", "passwd", "passport", "iloveyou", "iloveu", "loveme", "qwerty", "qwer", "asdf",
    "asdfgh", "zxcvbn", "qazwsx", "welcome", "letmein", "admin", "administrator", "root",
    "guest", "user", "test", "login", "default", "changeme", "secret", "sunshine", "princess",
    "football", "baseball", "soccer", "superman", "batman", "starwars", "pokemon", "monkey",
    "dragon", "master", "shadow", "trustno", "whatever", "freedom", "computer", "internet",
    "hello", "helloworld", "summer", "winter", "spring", "autumn", "michael", "jennifer",
    "charlie", "woaini", "wodemima", "mima", "nihao", "abc", "abcd"))
_TRAILING = "0123456789!@#$%^&*()_-+=~.?,;:'\""
_LETTER_SWAPS = str.maketrans({"@": "a", "4": "a", "0": "o", "3": "e", "$": "s", "5": "s",
                               "1": "i", "!": "i", "7": "t"})


def too_easy(password: str, username: str = "") -> bool:
    """Whether ``password`` is a repetition, a run of a keyboard row or the alphabet, a
    common word with digits or symbols after it, or little more than ``username``."""
    plain = "".join(password.lower().split())
    for word in (username.lower(), *SITE_WORDS):
        if len(word) >= 3:
            plain = plain.replace(word, "")
    if len(set(plain)) < MIN_DISTINCT or any(plain in run for run in RUNS):
        return True
    stem = plain.rstrip(_TRAILING)
    return stem in COMMON_WORDS or stem.translate(_LETTER_SWAPS) in COMMON_WORDS


def refuse_easy(password: str, username: str, field: str) -> None:
    """:raise 400 invalid_request: naming ``field``, when the new password is too easy."""
    if too_easy(password, username):
        raise ApiError("invalid_request", f"{field}: 这个密码太容易被猜到（常见单词加数字、"
                                          "1234567890 这样的连续字符，或主要是用户名），请换一个")
