"""The words and kept pieces of a page (lobbytalks/blueprints/page_text.py): translators
with the numbers filled in once, list items rendered once per arguments and language."""
from __future__ import annotations

import re

import pytest
from markupsafe import Markup

from lobbytalks import i18n, prose
from lobbytalks.blueprints import page_text


class CountingMacro:
    """Stands for a Jinja macro: a name, and a rendering that counts its calls."""

    name = "item"

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *args) -> Markup:
        self.calls += 1
        return Markup("<li>{}</li>").format(repr(args))


def test_an_item_is_rendered_once_per_arguments_and_language(app):
    macro = CountingMacro()
    row = {"id": "t1", "title": "备份", "messageCount": 3}
    with app.test_request_context("/"):
        first = page_text.remembered(macro, row, "大厅")
        again = page_text.remembered(macro, dict(row), "大厅")  # equal, not the same object
    assert first == again and macro.calls == 1
    with app.test_request_context("/"):
        page_text.remembered(macro, {**row, "messageCount": 4}, "大厅")  # the row changed
    with app.test_request_context("/?lang=en"):
        page_text.remembered(macro, row, "大厅")  # another language
    assert macro.calls == 3


def test_markup_and_text_with_the_same_characters_are_kept_apart(app):
    class Inline(CountingMacro):
        def __call__(self, value) -> Markup:
            self.calls += 1
            return Markup("<li>{}</li>").format(value)  # text is escaped, markup is not

    macro = Inline()
    with app.test_request_context("/"):
        as_text = page_text.remembered(macro, "<b>x</b>")
        as_markup = page_text.remembered(macro, Markup("<b>x</b>"))
    assert macro.calls == 2
    assert as_text == "<li>&lt;b&gt;x&lt;/b&gt;</li>" and as_markup == "<li><b>x</b></li>"


def test_the_kept_renderings_are_bounded(app, monkeypatch):
    monkeypatch.setattr(page_text, "FRAGMENTS_KEPT", 10)
    macro = CountingMacro()
    with app.test_request_context("/"):
        for n in range(35):
            page_text.remembered(macro, {"id": n})
    assert len(app.extensions["lobbytalks.fragments"]) <= 10
    assert macro.calls == 35


def test_every_string_has_its_numbers_filled_in_once(app):
    with app.test_request_context("/?lang=en"):
        translate = page_text.translator("en")
        assert page_text.translator("en") is translate  # one per settings and language
        numbers = prose.numbers(app.config["LOBBYTALKS"].settings, "en")
        for key in i18n.STRINGS:
            assert translate(key) == i18n.translate("en", key, **numbers)
        assert page_text.t("no.such.key") == "no.such.key"


def test_a_listed_question_shows_its_new_title_and_count_at_once(app, client, asker):
    topic = asker.ask("第一版标题")
    assert "第一版标题" in client.get("/").get_data(as_text=True)
    assert asker.web_post("revise", topic=topic, title="第二版标题", note="改").status_code == 200
    for path in ("/", "/questions", "/c/lobby"):
        page = client.get(path).get_data(as_text=True)
        assert "第二版标题" in page and "第一版标题" not in page, path


def test_a_closed_question_leaves_the_open_listing_at_once(app, client, asker):
    topic = asker.ask("很快就关闭的问题")
    assert "很快就关闭的问题" in client.get("/").get_data(as_text=True)
    assert asker.web_post("close", topic=topic).status_code == 200
    assert "很快就关闭的问题" not in client.get("/").get_data(as_text=True)


def test_english_text_quotes_as_the_rest_of_it_does():
    """“Curly” quotes around a title or a state, as in about thirty strings; straight ones
    only where they quote what a program prints or a shell command takes."""
    from lobbytalks.i18n_errors import ERROR_STRINGS
    literal = {"dev.oauth_note", "dev.agent.command"}
    straight = [key for key, (_, english) in {**i18n.STRINGS, **ERROR_STRINGS}.items()
                if '"' in english and key not in literal]
    assert straight == []


@pytest.mark.parametrize("lang, copy", [("zh", 'aria-label="复制：'), ("en", 'aria-label="Copy: ')])
def test_a_copy_button_names_what_it_copies_in_the_pages_language(client, lang, copy):
    page = client.get(f"/developers?lang={lang}").get_data(as_text=True)
    labels = re.findall(r'class="btn small secondary copy"[^>]*aria-label="([^"]*)"', page)
    assert labels and all(label.startswith(copy.split('"')[1]) for label in labels)
    assert not any(label.endswith((":", "：")) for label in labels)
    assert "复制: " not in page


@pytest.mark.parametrize("page, text, marked", [
    ("en", "Works with 张三's setup", ""),  # one name in Chinese: still English
    ("en", "We run SQLite in production; ask 张三 for details.", ""),
    ("en", "如何在线备份 SQLite？", ' lang="zh-CN"'),
    ("en", "数据库有 40 GB。", ' lang="zh-CN"'),
    ("en", "How do I back up SQLite?", ""),
    ("zh", "用 SQLite 在线备份 API 做热备份", ""),  # Chinese with a few English words
    ("zh", "How do I back up SQLite online?", ' lang="en"'),
    ("zh", "Works with 张三's setup", ' lang="en"'),
    ("zh", "12345 🙂 `x`", ""),  # neither script: the page's
    # code and addresses are in no language: the words around them decide
    ("zh", "详见[官方文档](https://www.sqlite.org/lang_vacuum.html#vacuuminto)。", ""),
    ("en", "详见[官方文档](https://www.sqlite.org/lang_vacuum.html#vacuuminto)。", ' lang="zh-CN"'),
    ("zh", "参见 https://www.sqlite.org/backup.html 的说明", ""),
    ("zh", "参见 www.sqlite.org 的说明", ""),
    ("en", "参见 https://www.sqlite.org/backup.html 的说明", ' lang="zh-CN"'),
    ("zh", "先运行 `PRAGMA wal_checkpoint(TRUNCATE)` 再用 `sqlite3 app.db \".backup b.db\"` 备份 [S1]。", ""),
    ("en", "I bought it from 中关村电子市场 in Beijing", ""),  # a long name: still English
    ("en", "Ask 田中さん about it", ""),
    ("en", "一", ' lang="zh-CN"'),
    # Japanese and Korean are their own, on either page
    ("en", "SQLite のバックアップ方法", ' lang="ja"'),
    ("zh", "SQLite のバックアップ方法", ' lang="ja"'),
    ("en", "SQLite 백업 가이드", ' lang="ko"'),
    ("zh", "SQLite 백업 가이드", ' lang="ko"'),
    ("zh", "如何在线备份？", ""),
    ("en", "", ""),
    # right to left: laid out by their own direction (a Hebrew or Arabic title took the
    # page's, its question mark and numbers on the wrong side), claiming no language...
    ("zh", "איך מגבים SQLite?", ' dir="auto"'),  # an English word does not make it English
    ("en", "كيف أنسخ قاعدة البيانات احتياطيا؟", ' dir="auto"'),
    ("zh", "מה זה", ' dir="auto"'),
    ("zh", "如何备份 SQLite？", ""),
    ("en", "\U0001e900\U0001e901\U0001e902?", ' dir="auto"'),  # Adlam, beyond the BMP
    # ...but a sentence quoting one such word keeps its own (a screen reader's voice)
    ("zh", "How to render the Hebrew word שלום in a PDF?", ' lang="en" dir="auto"'),
    ("en", "用 Python 处理希伯来文 עברית 的排序规则", ' lang="zh-CN" dir="auto"'),
])
def test_words_are_marked_by_the_script_most_of_them_are_in(app, page, text, marked):
    """One Chinese character marked a whole English sentence Chinese on an English page."""
    with app.test_request_context(f"/?lang={page}"):
        assert str(page_text.lang_of(text)) == marked
        wrapped = str(page_text.in_own_lang(text + " <b>"))
        assert wrapped.endswith("&lt;b&gt;" + ("</span>" if marked else ""))  # escaped


def test_a_right_to_left_question_reads_right_to_left_on_its_page_and_in_lists(client, asker):
    title = "איך מגבים מסד נתונים בזמן שהוא פועל?"
    topic = asker.ask(title, description="צריך גיבוי חם של 40 GB.")
    page = asker.http.get(f"/q/{topic}").get_data(as_text=True)
    assert f'<h1 dir="auto">{title}</h1>' in page
    assert '<div class="md" dir="auto">' in page
    listing = client.get("/questions").get_data(as_text=True)
    assert f'href="/q/{topic}" dir="auto">{title}</a>' in listing
    assert "dir=" not in client.get(f"/q/{asker.ask()}").get_data(as_text=True).split("<main")[1]


def test_each_block_of_a_mixed_text_takes_its_own_direction(asker):
    """dir="auto" on the whole background laid its English paragraph out right to left
    after a Hebrew one: each paragraph, item and quote now takes its own."""
    topic = asker.ask("איך מגבים?", description="צריך גיבוי.\n\nThen in English.\n\n- פריט\n- item\n\n> ציטוט")
    page = asker.http.get(f"/q/{topic}").get_data(as_text=True)
    for block in ('<p dir="auto">Then in English.</p>', '<li dir="auto">item</li>',
                  '<blockquote dir="auto">'):
        assert block in page, block
    plain = asker.http.get(f"/q/{asker.ask(description='Only English.')}").get_data(as_text=True)
    assert "<p>Only English.</p>" in plain


def test_right_to_left_names_and_titles_keep_their_direction_on_every_list(app, asker):
    """/tasks, a community's name and description and the inbox's sentences showed a Hebrew
    title in the page's direction: its question mark and the quotes around it moved."""
    from conftest import contributor, good_result
    community = asker.communities_post("create", name="מועדון קריאה", description="על ספרים").get_json()["id"]
    title = "איך מגבים?"
    topic = asker.ask(title)
    owner, agent = contributor(app)
    task = agent.claim(topic).get_json()["task"]["id"]
    assert agent.post("submit_result", taskId=task, **good_result()).status_code == 200
    tasks = owner.http.get("/tasks").get_data(as_text=True)
    assert f'href="/q/{topic}" dir="auto">{title}</a>' in tasks
    listing = asker.http.get("/communities").get_data(as_text=True)
    assert f'href="/c/{community}" dir="auto">מועדון קריאה</a>' in listing
    assert '<p class="excerpt" dir="auto">על ספרים' in listing
    assert '<h1 dir="auto">מועדון קריאה</h1>' in asker.http.get(f"/c/{community}").get_data(as_text=True)
    inbox = asker.http.get("/inbox").get_data(as_text=True)
    assert f'“<bdi dir="auto">{title}</bdi>”' in inbox  # set apart inside the sentence quoting it
    label = re.search(r'aria-label="标为已读：([^"]*)"', inbox).group(1)
    assert title in label and "bdi" not in label  # a button's name is words, not markup
    assert "<bdi>" not in owner.http.get("/inbox").get_data(as_text=True)
    from lobbytalks.services import notifications
    mailed = notifications.describe({"kind": "answer", "actor": "bob", "topicTitle": title}, "en")
    assert mailed == f"bob answered your question “\u2068{title}\u2069”"  # a mail: invisible marks


def test_peoples_words_in_the_other_language_say_so_wherever_a_page_shows_them(app, asker):
    """WCAG 3.1.2: a Chinese title on an English /tasks, /admin, /memories or inbox line, a
    community's description and a version's note were read in the page's voice."""
    from conftest import contributor, good_result
    title = "如何在 SQLite 中安全地做在线备份？"
    community = asker.communities_post("create", name="读书会", description="读书、写作与工具的讨论。").get_json()["id"]
    topic = asker.ask(title)
    assert asker.web_post("revise", topic=topic, title=title + "（续）", note="数据库变大了").status_code == 200
    owner, agent = contributor(app)
    task = agent.claim(topic).get_json()["task"]["id"]
    runs = [{"name": "sqlite3", "inputSummary": "运行 .backup 命令",
             "summary": "备份完成，完整性检查返回正常。", "status": "success"}]
    assert agent.post("submit_result", taskId=task, **good_result(toolRuns=runs)).status_code == 200
    english = {"Accept-Language": "en"}
    zh = ' lang="zh-CN"'
    assert f'href="/q/{topic}"{zh}>' in owner.http.get("/tasks", headers=english).get_data(as_text=True)
    assert f'<p class="excerpt"{zh}>读书' in asker.http.get("/communities?lang=en").get_data(as_text=True)
    assert f'<p class="lead about"{zh}>读书' in asker.http.get(f"/c/{community}").get_data(as_text=True)
    question = asker.http.get(f"/q/{topic}").get_data(as_text=True)
    assert f'<span{zh}>数据库变大了</span>' in question
    # an answer's tool run: what it was given and what it found, as its other fields
    assert f'<span{zh}>运行 .backup 命令</span>' in question
    assert f'<p{zh}>备份完成，完整性检查返回正常。</p>' in question
    assert f'<bdi{zh}>{title}（续）</bdi>' in asker.http.get("/inbox").get_data(as_text=True)
    memories = owner.http.get("/memories", headers=english).get_data(as_text=True)
    assert f'<span{zh}>{title}（续）</span>' in memories


def test_what_people_type_takes_the_direction_of_its_first_letter(asker):
    page = asker.http.get("/ask").get_data(as_text=True)
    for name in ("title", "description", "privateContext"):
        field = re.search(rf'<(?:input|textarea) id="f-{name}"[^>]*>', page).group(0)
        assert 'dir="auto"' in field, field
    account = asker.app.test_client().get("/login").get_data(as_text=True)
    password = re.search(r'<input id="f-password"[^>]*>', account).group(0)
    assert "dir=" not in password  # a password's characters are not words


@pytest.mark.parametrize("accept, html_lang", [
    ("en-US,en;q=0.9", "en"),
    ("en-GB;q=0.9, *;q=0.5", "en"),
    ("*, en;q=0.5", "zh-CN"),  # "anything" wanted more than English: the site's default
    ("de, *;q=0.9, en;q=0.1", "zh-CN"),
    ("en, *", "en"),  # at equal q a named language comes first
    ("de, en;q=0.7, zh;q=0.5", "en"),
    ("zh-CN,zh;q=0.9,en;q=0.8", "zh-CN"),
    ("zh-TW", "zh-CN"),
    ("en;q=0.5, zh;q=0.8", "zh-CN"),
    ("zh;q=0, en", "en"),
    ("en;q=0", "zh-CN"),
    ("fr-FR, de", "zh-CN"),
    ("*", "zh-CN"),
    ("", "zh-CN"),
    (";;q=x,,", "zh-CN"),
])
def test_a_first_visit_is_in_the_language_the_browser_asks_for(client, accept, html_lang):
    response = client.get("/", headers={"Accept-Language": accept})
    assert response.status_code == 200
    assert f'<html lang="{html_lang}">' in response.get_data(as_text=True)
    assert "Accept-Language" in response.headers["Vary"]  # a cache must not mix them


def test_a_chosen_language_wins_over_the_browsers(client):
    english = {"Accept-Language": "en-US,en;q=0.9"}
    assert '<html lang="zh-CN">' in client.get("/?lang=zh", headers=english).get_data(as_text=True)
    # the choice is remembered: the next page stays Chinese whatever the browser asks
    assert '<html lang="zh-CN">' in client.get("/questions", headers=english).get_data(as_text=True)
    assert '<html lang="en">' in client.get("/?lang=en").get_data(as_text=True)
    assert '<html lang="en">' in client.get("/communities", headers={
        "Accept-Language": "zh-CN"}).get_data(as_text=True)


def test_kept_pages_are_kept_apart_by_the_language_the_browser_asks_for(app):
    for accept, expected in (("zh-CN", "zh-CN"), ("en", "en"), ("zh-CN", "zh-CN"), ("en", "en")):
        page = app.test_client().get("/", headers={"Accept-Language": accept})
        assert f'<html lang="{expected}">' in page.get_data(as_text=True)
