"""Markdown on the pages: what it renders, what stays out, and that the JSON keeps the text."""
from __future__ import annotations

import pytest

from conftest import good_result
from lobbytalks.formatting import markdown, markdown_inline, markdown_text

REL = 'rel="nofollow ugc noopener"'


@pytest.mark.parametrize("text, expected", [
    ("**粗体** 与 *斜体* 与 ~~删除~~", "<p><strong>粗体</strong> 与 <em>斜体</em> 与 <s>删除</s></p>"),
    ("- 一\n- 二", "<ul>\n<li>一</li>\n<li>二</li>\n</ul>"),
    ("> 引用", "<blockquote>\n<p>引用</p>\n</blockquote>"),
    ("`x < y`", "<p><code>x &lt; y</code></p>"),
    ("第一行\n第二行", "<p>第一行<br>\n第二行</p>"),
    ("见 https://sqlite.org/backup.html 。",
     f'<p>见 <a href="https://sqlite.org/backup.html" {REL}>https://sqlite.org/backup.html</a> 。</p>'),
    ("[文档](https://sqlite.org)", f'<p><a href="https://sqlite.org" {REL}>文档</a> (sqlite.org)</p>'),
    # what stays out: headings, images, raw HTML, script URLs
    ("# 标题", "<p># 标题</p>"),
    # a line that CommonMark takes for a link reference definition stays, as written
    ("[注意]: 生产库有200GB，不能停机", "<p>[注意]: 生产库有200GB，不能停机</p>"),
    ("脚注[^1]\n\n[^1]: 这是脚注。", "<p>脚注[^1]</p>\n<p>[^1]: 这是脚注。</p>"),
    ("标题\n===", "<p>标题<br>\n===</p>"),
    ("<script>alert(1)</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"),
    ('<a onclick="y">z</a>', '<p>&lt;a onclick="y"&gt;z&lt;/a&gt;</p>'),
    ("[点我](javascript:alert(1))", "<p>[点我](javascript:alert(1))</p>"),
    ("[点我](data:text/html,x)", "<p>[点我](data:text/html,x)</p>"),
    # a code block, which may scroll sideways, is in the tab order; nobody else's tabindex is
    ("```python\nx = 1\n```", '<pre tabindex="0"><code>x = 1\n</code></pre>'),
    ("    indented = 1", '<pre tabindex="0"><code>indented = 1\n</code></pre>'),
    ('<pre tabindex="5">x</pre>', '<p>&lt;pre tabindex="5"&gt;x&lt;/pre&gt;</p>'),
])
def test_markdown_renders_the_safe_subset(text, expected):
    assert str(markdown(text)).strip() == expected


@pytest.mark.parametrize("text, expected", [
    ("![追踪像素](https://tracker.e.org/p.gif)",
     f'<p><a href="https://tracker.e.org/p.gif" {REL}>追踪像素</a> (tracker.e.org)</p>'),
    ("见 ![](https://e.org/a.png)", f'<p>见 <a href="https://e.org/a.png" {REL}>https://e.org/a.png</a></p>'),
    ("![点我](javascript:alert(1))", "<p>![点我](javascript:alert(1))</p>"),
    # inside a link's words an image is its words only, and the outer link is vetted as any
    ("[SQLite 文档 https://www.sqlite.org/backup.html ![.](http://a.b)](http://evil.example/x)",
     "<p>SQLite 文档 https://www.sqlite.org/backup.html .</p>"),
    # no reference links: the definition is text, and nothing links to the address
    ("[官方说明 ![a](https://q.org/a.png)][r]\n\n[r]: http://192.168.1.1:8080/admin/reboot",
     f'<p>[官方说明 <a href="https://q.org/a.png" {REL}>a</a> (q.org)][r]</p>\n'
     "<p>[r]: http://192.168.1.1:8080/admin/reboot</p>"),
    ("[SQLite 文档 ![](https://www.sqlite.org/a.png)](https://evil.example/)",
     "<p>SQLite 文档 https://www.sqlite.org/a.png</p>"),
    ("[文档 ![图标](https://www.sqlite.org/i.png)](https://www.sqlite.org/docs.html)",
     f'<p><a href="https://www.sqlite.org/docs.html" {REL}>文档 图标</a> (www.sqlite.org)</p>'),
])
def test_an_image_is_a_link_to_it_never_loaded(text, expected):
    """Shown, it would load a third party's URL into every reader's browser; a stray "!"
    before a link (the parser with images off) read like a glitch."""
    assert str(markdown(text)).strip() == expected


@pytest.mark.parametrize("text, expected", [
    # where no source could be: a private address, plain http, user info, no host of its own
    ("见 [[S1]](http://10.0.0.1/x)", f'<p>见 <a href="#m-abc-s1" class="cite" {REL}>[S1]</a></p>'),
    ("[备份](http://sqlite.org/backup.html)", "<p>备份</p>"),
    ("[文档](https://www.sqlite.org@evil.com/)", "<p>文档</p>"),
    ("[x](//evil.com/x) [y](/logout) [z](#top)", "<p>x y z</p>"),
    ("http://localhost:8000/admin", "<p>http://localhost:8000/admin</p>"),
    ("![图](http://10.0.0.1/i.png)", "<p>图</p>"),
    # words that read as another address than the link's, or a look-alike host
    ("[https://www.sqlite.org/backup.html](https://evil.com/)",
     "<p>https://www.sqlite.org/backup.html</p>"),
    ("[www.sqlite.org](https://sqlite.org.evil.com/)", "<p>www.sqlite.org</p>"),
    ("见 https://www.sqlіte.org/backup.html", "<p>见 https://www.sqlіte.org/backup.html</p>"),
    ("[sqlite.org](https://www.xn--sqlte-p2e.org/)", "<p>sqlite.org</p>"),
    ("[[S1]](https://sqlite.org/)", f'<p><a href="#m-abc-s1" class="cite" {REL}>[S1]</a></p>'),
    # ... nor may a mail link's words show another address or pass for a citation
    ("[https://accounts.google.com/signin](mailto:phish@evil-mail.com?subject=reset)",
     "<p>https://accounts.google.com/signin</p>"),
    ("[www.paypal.com](mailto:support@evil-mail.com)", "<p>www.paypal.com</p>"),
    ("[help@sqlite.org](mailto:phish@evil-mail.com)", "<p>help@sqlite.org</p>"),
    ("[\\[S1\\]](mailto:src@evil-mail.com)",
     f'<p><a href="#m-abc-s1" class="cite" {REL}>[S1]</a></p>'),
    # what stays a link: a public https address, its own words, a subdomain of what it says,
    # a bare www. name (as https), an e-mail address
    ("[sqlite.org](https://www.sqlite.org/backup.html)",
     f'<p><a href="https://www.sqlite.org/backup.html" {REL}>sqlite.org</a></p>'),
    # ... though words naming a parent domain do not show who runs the subdomain: shared
    # hosting and public suffixes put strangers under "github.io" and "co.uk"
    ("[github.io](https://attacker.github.io/login)",
     f'<p><a href="https://attacker.github.io/login" {REL}>github.io</a> (attacker.github.io)</p>'),
    ("[https://github.io](https://attacker.github.io/)",
     f'<p><a href="https://attacker.github.io/" {REL}>https://github.io</a> (attacker.github.io)</p>'),
    ("[co.uk](https://evil.co.uk/)", f'<p><a href="https://evil.co.uk/" {REL}>co.uk</a> (evil.co.uk)</p>'),
    ("[python.org](https://docs.python.org/3/)",
     f'<p><a href="https://docs.python.org/3/" {REL}>python.org</a> (docs.python.org)</p>'),
    ("见 www.sqlite.org", f'<p>见 <a href="https://www.sqlite.org" {REL}>www.sqlite.org</a></p>'),
    ("[写信](mailto:a@sqlite.org)", f'<p><a href="mailto:a@sqlite.org" {REL}>写信</a></p>'),
    ("[A@sqlite.org](mailto:a@sqlite.org?subject=hi)",
     f'<p><a href="mailto:a@sqlite.org?subject=hi" {REL}>A@sqlite.org</a></p>'),
    # ... also with what draws nothing or more words around them
    ("[[S1]\u200b](https://example.com/phish)",
     f'<p><a href="#m-abc-s1" class="cite" {REL}>[S1]</a>\u200b</p>'),
    ("[[S1] official](https://example.com/other)",
     f'<p><a href="#m-abc-s1" class="cite" {REL}>[S1]</a> official</p>'),
    ("[docs.python.org\u200b](https://example.com/b)", "<p>docs.python.org\u200b</p>"),
    ("[see docs.python.org now](https://example.com/b)", "<p>see docs.python.org now</p>"),
    ("[docs.python.org now](https://example.com/b)", "<p>docs.python.org now</p>"),
    ("[Node.js docs](https://nodejs.org/docs)",
     f'<p><a href="https://nodejs.org/docs" {REL}>Node.js docs</a> (nodejs.org)</p>'),
    # whatever words a link has, where it leads is shown after it unless they show that
    ("[(https://docs.python.org/3/)](https://evil-example.com/login)",
     f'<p><a href="https://evil-example.com/login" {REL}>(https://docs.python.org/3/)</a>'
     ' (evil-example.com)</p>'),
    ("[docs.python.org,](https://evil-example.com/a)",
     f'<p><a href="https://evil-example.com/a" {REL}>docs.python.org,</a> (evil-example.com)</p>'),
    # ... and a name inside a longer one is not it: "python.org" does not show "thon.org"
    ("[python.org 官方文档](https://thon.org/downloads)",
     f'<p><a href="https://thon.org/downloads" {REL}>python.org 官方文档</a> (thon.org)</p>'),
    ("[github.com 发布页](https://hub.com/r)",
     f'<p><a href="https://hub.com/r" {REL}>github.com 发布页</a> (hub.com)</p>'),
    ("[见sqlite.org文档](https://sqlite.org/x)", f'<p><a href="https://sqlite.org/x" {REL}>见sqlite.org文档</a></p>'),
    ("[python.org 官方文档](https://evil-example.com/a)",
     f'<p><a href="https://evil-example.com/a" {REL}>python.org 官方文档</a> (evil-example.com)</p>'),
    # file names are no addresses: only what is written as one is linked
    ("见 main.rs、setup.py 和 v1.2.io", "<p>见 main.rs、setup.py 和 v1.2.io</p>"),
    ("见 https://sqlite.org/wal.html", f'<p>见 <a href="https://sqlite.org/wal.html" {REL}>'
                                      'https://sqlite.org/wal.html</a></p>'),
])
def test_a_link_leads_only_where_a_source_could_and_says_where(text, expected):
    """An answer's links pass the rule its sources pass, and their words cannot pretend to
    be a citation or another address: otherwise the words stay, as text."""
    assert str(markdown(text, anchor="m-abc", sources=1)).strip() == expected


def test_citations_link_to_the_answers_own_sources_only_in_text():
    html = str(markdown("见 [S1] 与 [S2]，[S9] 不存在；`[S1]` 与 https://x.org/[S1] 不是引用",
                        anchor="m-abc", sources=2))
    assert html.count('class="cite"') == 2
    assert f'<a href="#m-abc-s1" class="cite" {REL}>[S1]</a>' in html
    assert "[S9]" in html and "<code>[S1]</code>" in html
    assert 'href="https://x.org/%5BS1%5D"' in html
    assert str(markdown_inline("条件 [S2] **成立**", anchor="m-abc", sources=2)) == \
        f'条件 <a href="#m-abc-s2" class="cite" {REL}>[S2]</a> <strong>成立</strong>'
    # a lowercase citation is one too (submit_result checks its number), shown as [S1]
    assert str(markdown_inline("见 [s1]", anchor="m-abc", sources=1)) == \
        f'见 <a href="#m-abc-s1" class="cite" {REL}>[S1]</a>'
    # only ASCII digits number a source: "[S١]" and "[S１]" are text
    assert 'class="cite"' not in str(markdown_inline("见 [S١] 与 [S１]", anchor="m-abc", sources=1))


def test_pages_render_markdown_and_the_json_keeps_the_text(app, asker, member):
    background = "服务**一直**在写入：\n\n- 40 GB\n- WAL 模式\n\n# 不是标题"
    topic = asker.ask(description=background)
    agent = member.new_agent()
    task = agent.claim(topic).get_json()["task"]["id"]
    conclusion = "用 **在线备份 API** [S1]，详见 https://www.sqlite.org/backup.html 。"
    r = agent.post("submit_result", taskId=task, **good_result(conclusion=conclusion))
    assert r.status_code == 200, r.get_json()
    message = r.get_json()["messageId"]
    page = asker.http.get(f"/q/{topic}").get_data(as_text=True)
    assert "服务<strong>一直</strong>在写入：" in page and "<li>WAL 模式</li>" in page
    assert "<h1># 不是标题" not in page and "<p># 不是标题</p>" in page
    assert "用 <strong>在线备份 API</strong>" in page
    assert f'<a href="#m-{message}-s1" class="cite" {REL}>[S1]</a>' in page
    assert f'<a href="https://www.sqlite.org/backup.html" {REL}>' in page
    full = asker.web_get(topic=topic).get_json()
    assert full["topic"]["description"] == background
    assert full["messages"][0]["text"] == conclusion


def test_excerpts_are_the_words_without_the_marks():
    assert markdown_text("服务**一直**在写入：\n\n- 40 GB\n- `WAL` & <模式>") == \
        "服务一直在写入： 40 GB · WAL & <模式>"


def test_an_excerpts_list_items_and_paragraphs_do_not_run_together():
    """A background's bullets read as one garbled sentence in listings."""
    assert markdown_text("It drops at 2 am.\n\n- Happens on every node\n- Not on wired\n\n"
                         "Setup:\n\nThree nodes") == \
        "It drops at 2 am. Happens on every node · Not on wired · Setup: Three nodes"
    assert markdown_text("- outer\n  - inner\n\n> quoted") == "outer · inner · quoted"
    assert markdown_text("one line\nwrapped") == "one line wrapped"  # one paragraph
    assert markdown_text("") == ""


def test_listings_show_excerpts_without_markdown_marks(client, asker):
    asker.ask(description="服务**一直**在写入 & <b>不</b>")
    body = client.get("/c/lobby").get_data(as_text=True)
    assert '<p class="excerpt">服务一直在写入 &amp; &lt;b&gt;不&lt;/b&gt;</p>' in body


RLO, PDF = "\u202e", "\u202c"
PILED = "Z" + "\u0301" * 80


def test_pages_draw_no_reordering_control_nor_piled_marks_from_an_answer(app, asker, member):
    """An answer keeps what its agent wrote (the JSON says so), but the pages do not draw a
    name that shows "exe.pdf" for "fdp.exe", a verdict that reads backwards, nor a letter
    with eighty accents reaching into the text above it."""
    topic = asker.ask()
    agent = member.new_agent()
    task = agent.claim(topic).get_json()["task"]["id"]
    evidence = dict(good_result()["evidence"][0], title=f"sqlite-backup-{RLO}fdp.exe")
    tool = {"name": f"virus-scan {RLO}neelc :tluser{PDF}", "summary": PILED, "status": "success"}
    r = agent.post("submit_result", taskId=task, **good_result(
        conclusion=f"用在线备份 API 做一致副本，不要直接复制数据库文件 {RLO}[S1]", evidence=[evidence], toolRuns=[tool],
        uncertainties=[f"\u2067{RLO}不确定\u2069"]))
    assert r.status_code == 200, r.get_json()
    page = asker.http.get(f"/q/{topic}").get_data(as_text=True)
    assert not {RLO, PDF, "\u2067", "\u2069"} & set(page)
    assert "sqlite-backup-fdp.exe" in page and "virus-scan neelc :tluser" in page
    assert "\u0301" * 4 not in page and "Z" + "\u0301" * 3 in page
    kept = asker.web_get(topic=topic).get_json()["messages"][0]
    assert kept["text"].endswith(f"{RLO}[S1]") and kept["delivery"]["toolRuns"][0]["summary"] == PILED
