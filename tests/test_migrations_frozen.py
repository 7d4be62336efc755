"""A migration that has run somewhere never changes again.

A database records only the numbers of the migrations it ran: edit one after it shipped and
the databases that ran the old text keep its old schema under the same number (an edited
0014 left databases at version 14 without the column 0015 reads, and an edited 0015 left
others whose notifications refused the kinds 0016 added). A change of schema is a new
migration. Comments may change; the statements may not.
"""
from __future__ import annotations

import hashlib

import pytest

from lobbytalks import db as dbmod

FROZEN = {
    "sqlite": {
        "0001_initial": "4310d9e547502a86",
        "0002_lookup_indexes": "bbfee3c5adaa5a0f",
        "0004_agent_requests": "25e43d3cdf9504dd",
        "0006_search": "a4a5fff9d9198b85",
        "0007_notifications": "9cda79522e593f58",
        "0008_moderation": "2db645124cd07443",
        "0009_people": "fd5ed51c31e9a5d9",
        "0010_portable_lookups": "413912a429837a13",
        "0011_counts_and_indexes": "d1e64a124eaad16f",
        "0012_email_confirmation": "c833fe8d777d9e22",
        "0013_valid_answer_counts": "212775fcb1ab7546",
        "0014_mailed_notifications": "87d1c953066d7e72",
        "0015_moderation_notices": "2e5daa1e99d15e85",
        "0016_hidden_questions": "066982a1ef2a0daf",
        "0017_agent_failures": "1ad622193b656615",
        "0018_question_requests": "84e0e872e84cbb71",
        "0019_earlier_agent_failures": "c045b68baddb6079",
        "0020_community_requests": "501627963e0fe4d6",
        "0021_author_questions": "cee24601e33dc57f",
        "0022_search_words_alike": "8ac64b4e04e49f12",
        "0023_reports": "f3a37492ea31507d",
        "0024_password_reset": "6ca1634765382051",
        "0025_report_notices": "91d744cc65d72b36",
        "0026_deleted_accounts": "1bf5ac50ab22ccbb",
        "0027_report_alerts": "33fa67499bdce215",
        "0028_search_hyphenated_words": "8ac64b4e04e49f12",
        "0029_last_answer_of_shown_answers": "a8b8d610a8d54f69",
    },
    "postgresql": {
        "0001_initial": "20b934add05439cd",
        "0002_lookup_indexes": "bbfee3c5adaa5a0f",
        "0004_agent_requests": "833254cf1c61e8de",
        "0006_search": "9c260271fc56e68f",
        "0007_notifications": "e38c480b74c220f3",
        "0008_moderation": "916f6d728e00c236",
        "0009_people": "fd5ed51c31e9a5d9",
        "0010_portable_lookups": "17db4fd369edb924",
        "0011_counts_and_indexes": "c452805bd9beb752",
        "0012_email_confirmation": "e87abe9dde94747d",
        "0013_valid_answer_counts": "212775fcb1ab7546",
        "0014_mailed_notifications": "afb99a87020a1591",
        "0015_moderation_notices": "d01698c15f79a615",
        "0016_hidden_questions": "41cc50bbfa4a0994",
        "0017_agent_failures": "a1e488bbc8c7b8c4",
        "0018_question_requests": "84e0e872e84cbb71",
        "0019_earlier_agent_failures": "c045b68baddb6079",
        "0020_community_requests": "501627963e0fe4d6",
        "0021_author_questions": "cee24601e33dc57f",
        "0022_search_words_alike": "8ac64b4e04e49f12",
        "0023_reports": "3a9a983b22626d89",
        "0024_password_reset": "1b6bb4e71f8f86e3",
        "0025_report_notices": "06b59cc91a690072",
        "0026_deleted_accounts": "0ae73f30b0ec7f8f",
        "0027_report_alerts": "a68b681766fdd256",
        "0028_search_hyphenated_words": "8ac64b4e04e49f12",
        "0029_last_answer_of_shown_answers": "a8b8d610a8d54f69",
    },
}


def statements_digest(sql: str) -> str:
    kept = [line.rstrip() for line in sql.splitlines()
            if line.strip() and not line.lstrip().startswith("--")]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()[:16]


@pytest.mark.parametrize("dialect", sorted(FROZEN))
def test_no_shipped_migration_changes(dialect):
    shipped = {f"{version:04d}_{name}": statements_digest(sql)
               for version, name, sql in dbmod.migrations(dialect)}
    changed = {name for name, digest in FROZEN[dialect].items() if shipped.get(name) != digest}
    assert not changed, (f"{sorted(changed)} changed after shipping: put the change in a new "
                         f"migration instead")
    # a new migration is frozen by adding its digest here, in the commit that adds it
    assert set(shipped) == set(FROZEN[dialect]), sorted(set(shipped) ^ set(FROZEN[dialect]))
