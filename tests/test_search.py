"""Search and browse: the index, the all-questions page, its filters, sorts and keyset pages."""
from __future__ import annotations

import re

import pytest

from conftest import Person, good_result, joined_person
from lobbytalks import create_app
from lobbytalks.db import Q, connect
from lobbytalks.services.search import index_terms, match_query


@pytest.mark.parametrize("q, expected", [
    ("备份", '"备份"'),
    ("在线备份", '"在线 线备 备份"'),
    ("库", '"库"'),
    ("SQLite backup", '"sqlite"* AND "backup"*'),
    ("ＳＱＬｉｔｅ", '"sqlite"*'),  # full-width letters fold like the index does
    ('x" OR "y', '"x" AND "or" AND "y"'),  # FTS5 syntax typed by a visitor is only words
    ("NEAR(a b)", '"near"* AND "a" AND "b"'),
    ("", None), ("   ", None), ("*** !!!", '""'),
    ("C++", '"c"'), ("Go modules", '"go" AND "modules"*'),  # short words: whole words only
    # a hyphenated word: as one word, or as its parts in a row
    ("Wi-Fi", '("wifi"* OR ("wi" AND "fi"))'),
    ("e-mail setup", '("email"* OR ("e" AND "mail"*)) AND "setup"*'),
])
def test_match_query_quotes_every_term(q, expected):
    assert match_query(q) == expected


def test_index_terms_write_cjk_runs_as_characters_and_pairs():
    assert index_terms("在线备份 of SQLite") == "在 线 备 份 在线 线备 备份  of sqlite"
    assert index_terms("Wi-Fi 信号") == "wi fi  wifi 信 号 信号"


@pytest.fixture
def app(settings):
    """Rate limits out of the way: these tests ask many questions."""
    return create_app(settings.with_overrides(rate_topic="1000/day", rate_claim="1000/minute"))


@pytest.fixture
def site(app):
    return app


def found(client, **params) -> list[str]:
    r = client.get("/questions", query_string=params)
    assert r.status_code == 200
    return re.findall(r'class="item-title" href="/q/([^"]+)"', r.get_data(as_text=True))


def test_words_in_title_and_public_background_are_found_in_both_languages(site, asker):
    backup = asker.ask("如何在线备份 SQLite 数据库？", description="服务一直在写入。")
    index = asker.ask("Which index makes this query fast?", description="A slow JOIN on orders.")
    secret = asker.ask("一个普通的问题", privateContext="内部代号：蓝鲸计划")
    client = site.test_client()
    assert found(client, q="备份") == [backup]
    assert found(client, q="库") == [backup]  # one character
    assert found(client, q="在线备份") == [backup]
    assert found(client, q="写入") == [backup]  # public background
    assert found(client, q="indexes") == [] and found(client, q="ind") == [index]  # prefixes
    assert found(client, q="JOIN orders") == [index]
    assert found(client, q="%") == []  # no word: nothing, rather than everything
    assert found(client, q="备份 orders") == []  # every term must match
    # private context is never indexed: nobody finds a question by it
    assert found(client, q="蓝鲸") == [] and secret in found(client)


def test_a_one_letter_word_finds_itself_not_every_word_it_starts(site, asker):
    """"C++" found every coffee question: its "c" matched as the start of any word."""
    cpp = asker.ask("C++ 的智能指针什么时候用 shared_ptr？")
    asker.ask("手冲咖啡 coffee 的水温多少合适？")
    page = Person(site).http.get("/questions?q=C%2B%2B").get_data(as_text=True)
    assert f"/q/{cpp}" in page and "手冲咖啡" not in page


def test_accents_and_punctuation_are_searched_alike_on_either_database(site, asker):
    """SQLite's index dropped accents and split at punctuation by itself; PostgreSQL's kept
    "café", "3.14" and "example.org" whole, so those searches found nothing there."""
    cafe = asker.ask("Café culture and résumé writing",
                     description="naïve approach; e-mail alice@example.com; see "
                                 "https://example.org/path?x=1")
    cpp = asker.ask("C++ vs Go for servers", description="version 3.14 and snake_case_words")
    dotted = asker.ask("Numbers 2024-10-01", description="foo-bar dotted.name")
    client = site.test_client()
    for q in ("cafe", "café", "resume", "RÉSUMÉ", "naive", "example.com", "example.org",
              "alice", "e-mail"):
        assert found(client, q=q) == [cafe], q
    for q in ("3.14", "snake_case", "case", "c++", "go"):
        assert found(client, q=q) == [cpp], q
    for q in ("name", "dotted.name", "foo-bar", "2024-10-01"):
        assert found(client, q=q) == [dotted], q


def test_a_hyphenated_word_and_the_same_word_without_hyphens_find_each_other(site, asker):
    """"wifi" and "WiFi" found nothing of a question about "Wi-Fi", and "Wi-Fi" nothing of
    one about "WiFi"."""
    hyphened = asker.ask("Wi-Fi mesh drops at night", description="an e-mail alert each time")
    joined = asker.ask("WiFi 6 router keeps rebooting", description="email me")
    client = site.test_client()
    for q in ("wifi", "WiFi", "Wi-Fi", "wi‐fi", "email", "e-mail"):
        assert sorted(found(client, q=q)) == sorted([hyphened, joined]), q
    assert found(client, q="mesh wi-fi") == [hyphened]
    assert found(client, q="wi fi") == [hyphened]  # (its parts are words of it too)


@pytest.mark.parametrize("q, title", [
    # a hyphenated search still finds its parts written apart, or inside a longer chain
    ("Wi-Fi", "non-Wi-Fi devices drop"), ("Wi-Fi", "Wi Fi 6 router"),
    ("UTF-8", "a non-UTF-8 file"), ("2024-10-01", "2024/10/01 outage"),
    ("2024-10-01", "pre-2024-10-01 builds"), ("x86-64", "x86_64 build"),
    ("COVID-19", "COVID 19 rules"), ("state-of-the-art", "state of the art tools"),
    ("10-01", "2024-10-01 outage"), ("2024-10-01", "2024年10月01日 故障"),
])
def test_a_hyphenated_search_finds_the_words_written_apart_too(site, asker, q, title):
    topic = asker.ask(title)
    asker.ask("an unrelated question about backups")
    assert found(site.test_client(), q=q) == [topic]


def test_a_revision_reindexes_in_the_same_transaction(site, asker, db):
    topic = asker.ask("旧标题：磁盘满了怎么办")
    assert asker.web_post("revise", topic=topic, title="新标题：内存不够怎么办").status_code == 200
    client = site.test_client()
    assert found(client, q="磁盘") == [] and found(client, q="内存") == [topic]
    rows = db.value("SELECT COUNT(*) FROM topic_search")
    assert rows == 1


def test_the_community_api_filter_uses_the_same_index(site, asker):
    wanted = asker.ask("备份策略怎么选？")
    asker.ask("别的问题")
    r = asker.web_get(community="lobby", q="备份")
    assert r.status_code == 200
    assert [t["id"] for t in r.get_json()["topics"]] == [wanted]
    # a LIKE wildcard is no wildcard here
    assert asker.web_get(community="lobby", q="%").get_json()["topics"] == []


def answer(site, person: Person, topic: str) -> str:
    agent = person.new_agent(f"虾{topic[-4:]}")
    task = agent.claim(topic).get_json()["task"]["id"]
    r = agent.post("submit_result", taskId=task, **good_result())
    assert r.status_code == 200, r.get_json()
    return r.get_json()["messageId"]


def test_filters_and_sorts(site, asker, clock_file):
    from conftest import advance
    first = asker.ask("第一个问题", intent="fact")
    advance(clock_file, 10)
    second = asker.ask("第二个问题")
    advance(clock_file, 10)
    third = asker.ask("第三个问题")
    helper = joined_person(site)
    answer(site, helper, first)
    advance(clock_file, 10)
    answer(site, helper, second)
    advance(clock_file, 10)
    answer(site, asker, first)
    asker.web_post("close", topic=third)
    client = site.test_client()
    assert found(client) == [third, second, first]
    assert found(client, sort="answers") == [first, second, third]
    assert found(client, sort="recent") == [first, second, third]
    assert found(client, answered="no") == [third]
    assert found(client, answered="yes") == [second, first]
    assert found(client, status="closed") == [third]
    assert found(client, status="open", intent="fact") == [first]
    assert found(client, card="yes") == []
    assert found(client, community="lobby") == [third, second, first]
    assert found(client, community="nowhere") == []
    # unknown values are the defaults, never an error
    assert found(client, sort="evil", status="x", answered="maybe") == [third, second, first]


def test_published_cards_filter(site, asker):
    topic = asker.ask("要做答案卡的问题")
    asker.ask("没有答案卡的问题")
    message = answer(site, asker, topic)
    assert asker.web_post("share", message=message, sharePublic=True).status_code == 200
    assert asker.web_post("card_preview", topic=topic).status_code == 200
    assert found(site.test_client(), card="yes") == []  # a draft is no card yet
    assert asker.web_post("card_publish", topic=topic).status_code == 200
    assert found(site.test_client(), card="yes") == [topic]


@pytest.mark.parametrize("sort", ["new", "answers", "recent"])
def test_keyset_pages_walk_every_question_once(site, asker, sort):
    ids = [asker.ask(f"分页问题 {n}") for n in range(45)]
    client = site.test_client()
    seen, after, pages = [], "", 0
    while True:
        r = client.get("/questions", query_string={"sort": sort, "after": after})
        body = r.get_data(as_text=True)
        seen += re.findall(r'class="item-title" href="/q/([^"]+)"', body)
        pages += 1
        nxt = re.search(r'rel="next" href="[^"]*after=([^"&]+)', body)
        if not nxt:
            break
        after = nxt.group(1).replace("%3A", ":")
    assert pages == 3 and sorted(seen) == sorted(ids) and len(seen) == 45


def test_a_broken_cursor_starts_at_the_top_and_past_the_end_says_so(site, asker):
    topic = asker.ask("唯一的问题")
    client = site.test_client()
    assert found(client, after="garbage") == [topic]
    assert found(client, after="99999999999999999999999.x") == [topic]
    # 19 digits: the pattern's length, past what a database integer holds
    assert found(client, after="9999999999999999999.t_x") == [topic]
    assert found(client, after="1.9999999999999999999.t_x", sort="answers") == [topic]
    body = client.get("/questions", query_string={"after": "1.t0"}).get_data(as_text=True)
    assert "没有更多问题了" in body and 'href="/questions"' in body


@pytest.mark.sqlite_only
def test_a_database_from_before_search_is_indexed_at_start(site, asker, settings):
    topic = asker.ask("升级前的问题：备份")
    conn = connect(settings.db_path)
    conn.execute("DELETE FROM topic_search")
    conn.close()
    assert found(site.test_client(), q="备份") == []
    again = create_app(settings)
    assert found(again.test_client(), q="备份") == [topic]


def test_filling_the_index_at_start_waits_for_another_process_filling_it(site, asker):
    """Two servers starting together on PostgreSQL after a migration emptied the index both
    filled it, and one died in a deadlock on the index's rows."""
    import threading
    import time
    from lobbytalks.startup import index_for_search
    db = site.config["LOBBYTALKS"].db
    asker.ask("Wi-Fi drops at night")
    other = threading.Thread(target=index_for_search, args=(db,))
    with db.transaction() as conn:  # the first process, filling it
        conn.execute(Q.lock_search_index)
        other.start()
        time.sleep(0.5)
        assert other.is_alive()  # the second waits
    other.join(10)
    assert not other.is_alive()


@pytest.mark.sqlite_only
def test_an_index_written_before_hyphenated_words_were_joined_is_written_again(
        site, asker, settings):
    topic = asker.ask("Wi-Fi drops at night")
    conn = connect(settings.db_path)
    conn.execute("UPDATE topic_search SET terms = 'wi fi drops at night'")  # as 0027 left it
    conn.execute("DELETE FROM schema_migrations WHERE version >= 28")
    conn.commit()
    conn.close()
    assert found(site.test_client(), q="wifi") == []
    again = create_app(settings)
    assert found(again.test_client(), q="wifi") == [topic]


@pytest.mark.sqlite_only
@pytest.mark.parametrize("match", [None, '"备份"'])
@pytest.mark.parametrize("query, index", [
    ("list_browse_newest", "topics_created"),
    ("list_browse_most_answers", "topics_answers"),
    ("list_browse_recently_answered", "topics_last_answer"),
])
def test_each_sort_walks_its_own_index(site, query, index, match, settings):
    # With a search too: SQLite then still walks the sort's index and stops at a page,
    # rather than start from every match and sort them all.
    conn = connect(settings.db_path)
    query += "" if match is None else "_searching"
    params = {"before_created": 1, "before_count": 1, "before_answer": 1, "before_id": "",
              "community": None, "status": None, "intent": None, "answered": None,
              "card": None, "match": match, "limit": 21}
    plan = " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + getattr(Q, query), params))
    conn.close()
    assert f"USING INDEX {index}" in plan and "TEMP B-TREE" not in plan, plan


def test_the_search_box_is_on_every_page(site, asker):
    for path in ("/", "/communities", "/c/lobby", "/ask", "/questions?q=x"):
        body = asker.http.get(path).get_data(as_text=True)
        assert 'action="/questions" role="search"' in body, path
    english = asker.http.get("/questions?lang=en").get_data(as_text=True)
    assert "All questions" in english and "Most answers" in english


def test_same_named_communities_can_be_told_apart_in_the_filter(site, asker):
    """Names need not be unique (§10): the filter's choices add who made each."""
    other = joined_person(site)
    mine = asker.communities_post("create", name="咖啡爱好者").get_json()["id"]
    theirs = other.communities_post("create", name="咖啡爱好者").get_json()["id"]
    assert other.communities_post("join", community=mine).status_code == 200
    page = Person(site).http.get("/questions?lang=en").get_data(as_text=True)
    labels = dict(re.findall(r'<option value="(c_[^"]+)"[^>]*>([^<]+)</option>', page))
    assert labels[mine] == f"咖啡爱好者 · {asker.username}"
    assert labels[theirs] == f"咖啡爱好者 · {other.username}"
    assert "<option value=\"lobby\"" in page and ">虾扯淡广场 · " not in page  # unique: name only
