"""The developer docs the server serves: /developers and /docs/external-agents-v1.md."""
from __future__ import annotations

import html
import json
import re

import pytest
from conftest import Person

from lobbytalks import create_app
from lobbytalks.actions import ACTIONS
from lobbytalks.errors import CODES

MARKDOWN = "/docs/external-agents-v1.md"


def markdown(client, **kwargs) -> str:
    r = client.get(MARKDOWN, **kwargs)
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "text/markdown; charset=utf-8"
    return r.get_data(as_text=True)


def halves(text: str) -> tuple[str, str]:
    chinese, english = text.split("\n## English\n")
    assert "\n## 中文\n" in chinese
    return chinese, english


def test_markdown_fills_in_the_request_host(open_client):
    text = markdown(open_client, base_url="https://qa.example.org")
    assert not re.search(r"\{\{\s*[A-Z_]+\s*\}\}", text)   # every placeholder filled in
    assert "https://qa.example.org/api/external/mcp" in text
    assert "https://lobbytalks.com" not in text


def test_markdown_prefers_the_configured_public_url(settings):
    client = create_app(settings.with_overrides(public_url="https://talk.example.org/")).test_client()
    r = client.get(MARKDOWN, base_url="http://10.0.0.5:8000")
    text = r.get_data(as_text=True)
    assert "https://talk.example.org/api/external/mcp" in text and "10.0.0.5" not in text
    assert "https://talk.example.org//" not in text
    assert r.headers["Cache-Control"] == "public, max-age=300"


def test_markdown_without_public_url_is_not_cached(client):
    assert client.get(MARKDOWN).headers["Cache-Control"] == "no-store"


def test_markdown_is_chinese_first_then_english_and_complete(client):
    chinese, english = halves(markdown(client))
    for half in (chinese, english):
        for code in CODES:
            assert f"| `{code}` |" in half, code          # the errors table, both languages
        for name in ACTIONS:
            assert f"| `{name}` |" in half, name          # the action table, both languages
        for needle in ("/api/external/manage", "/api/external/mcp", "2025-03-26", "2025-06-18",
                       "text/event-stream", "-32601", "-32602", "-32000", "isError",
                       "requestId", "heartbeat", "replayed", "codex mcp add", "mcpServers",
                       "dsh-mcp-client", "XIA_CHEDAN_AGENT_TOKEN", "64 KiB", "120"):
            assert needle in half, needle
    assert "`2025-03-26`、`2025-06-18`" in chinese  # each half punctuated in its language
    assert "Protocol versions: `2025-03-26`, `2025-06-18`." in english


def test_each_language_alone_is_its_half_under_the_shared_header(client):
    """An English reader of /developers met 330 lines of Chinese first, and its curl
    example only there ("see the Chinese section")."""
    both = markdown(client)
    chinese, english = halves(both)
    alone = {lang: markdown(client, query_string={"lang": lang}) for lang in ("en", "zh")}
    assert alone["en"].endswith(english) and "\n## 中文\n" not in alone["en"]
    assert "\n## English\n" not in alone["zh"] and "中文在前" not in alone["en"] + alone["zh"]
    assert alone["zh"].split("\n## 中文\n")[1].strip() == \
        chinese.split("\n## 中文\n")[1].strip().removesuffix("---").strip()
    for text in alone.values():
        assert text.startswith("# LobbyTalks 外部智能体接口 v1 / External agents API v1")
        assert 'action=list_topics&community=lobby' in text  # a REST example in each
    assert "see the Chinese section" not in english
    assert markdown(client, query_string={"lang": "fr"}) == both
    page = client.get("/developers?lang=en").get_data(as_text=True)
    assert f'href="{MARKDOWN}?lang=en"' in page


def test_no_command_in_the_docs_lets_the_shell_write_the_token_into_a_config(client):
    """A variable inside double quotes is expanded by the shell: ``claude mcp add`` then
    stored the token itself in ~/.claude.json, against the docs' own rule."""
    commands = [line for line in markdown(client).splitlines() if "mcp add" in line]
    assert len(commands) >= 4  # codex and claude, in both languages
    for line in commands:
        assert not re.search(r'"[^"]*\$\{?XIA_CHEDAN_AGENT_TOKEN', line), line
        if "claude mcp add" in line:  # its own expansion: ${NAME}, read at each connection
            assert "'Authorization: Bearer ${XIA_CHEDAN_AGENT_TOKEN}'" in line, line


def test_markdown_action_table_is_generated_from_the_table(client):
    chinese, _ = halves(markdown(client))
    rows = [line for line in chinese.splitlines() if line.startswith("| `") and "| GET |" in line
            or line.startswith("| `") and "| POST |" in line]
    assert [re.match(r"\| `(\w+)`", row).group(1) for row in rows] == list(ACTIONS)
    for row in rows:
        assert row.count(" | ") == 3, row   # four cells: no stray pipes inside a cell
    claim = next(row for row in rows if row.startswith("| `claim_task`"))
    assert "`topic`* (1–64)" in claim and "`requestId`* (UUID)" in claim and "`replyTo` (1–80)" in claim
    assert "{task, context?, replayed?}" in claim
    submit = next(row for row in rows if row.startswith("| `submit_result`"))
    assert "`conclusion`* (30–200)" in submit and "`evidence`* (array ≤8)" in submit


@pytest.mark.parametrize("lang, html_lang, heading, nav", [
    ("zh", "zh-CN", "把你的 AI 客户端接入本站", ">开发者<"),
    ("en", "en", "Connect your AI client", ">Developers<"),
])
def test_developers_page_is_a_site_page_in_either_language(open_client, lang, html_lang, heading, nav):
    r = open_client.get(f"/developers?lang={lang}", base_url="https://qa.example.org")
    assert r.status_code == 200 and r.mimetype == "text/html"
    page = r.get_data(as_text=True)
    assert f'<html lang="{html_lang}">' in page
    assert re.findall(r"<h1[^>]*>(.*?)</h1>", page) == [heading]
    assert f'aria-current="page">{nav[1:-1]}<' in page          # the site's navigation
    assert 'rel="icon"' in page
    assert "外部虾" not in page and "我的虾" not in page
    assert 'href="/agents"' in page
    assert 'codex mcp add xia-chedan --url &#34;https://qa.example.org/api/external/mcp&#34;' in page
    assert "@deepseek-ai/dsh-mcp-client" in page
    assert "url: https://qa.example.org/api/external/mcp" in page
    assert f'href="/docs/external-agents-v1.md{"?lang=en" if lang == "en" else ""}"' in page
    assert 'href="/docs/external-agents-openapi.json"' in page
    for action in ACTIONS:
        assert f"<code>{action}</code>" in page
    assert "dev." not in re.sub(r"<script.*?</script>", "", page, flags=re.S)  # all translated
    # The connector, with this server's address in its unit and cron line.
    assert page.count("LOBBYTALKS_AGENT_SERVER=https://qa.example.org") == 3
    assert "RestartPreventExitStatus=2 3 5" in page and "agent run --once" in page
    # The same snippets, with the same copy buttons, as /agents.
    for block in ("env-snippet", "cfg-codex", "cfg-claude-code", "cfg-deepseek-harness", "cfg-custom"):
        assert f'data-copy="#{block}"' in page and f'<code id="{block}">' in page


def test_the_connectors_unit_on_the_page_is_the_readmes(open_client):
    """The page's systemd unit had lost RestartSec and TimeoutStopSec: restarted 100 ms after
    each failure, a connector hit systemd's start limit during an outage and stayed down."""
    from pathlib import Path
    readme = (Path(__file__).parent.parent / "README.md").read_text("utf-8")
    unit = readme.split("lobbytalks-agent.service`:\n\n```ini\n", 1)[1].split("```", 1)[0]
    settings = {line for line in unit.splitlines()
                if "=" in line and not line.startswith(("#", "Description=", "Environment="))}
    page = html.unescape(open_client.get("/developers").get_data(as_text=True))
    shown = page.split('<code id="agent-unit">', 1)[1].split("</code>", 1)[0].splitlines()
    assert settings <= set(shown), settings - set(shown)
    assert {"RestartSec=60", "TimeoutStopSec=120"} <= settings


def test_developers_claude_code_config_is_valid_json(open_client):
    page = open_client.get("/developers", base_url="https://qa.example.org").get_data(as_text=True)
    block = re.search(r'<code id="cfg-claude-code">(.*?)</code>', page, re.S).group(1)
    config = json.loads(html.unescape(block))
    server = config["mcpServers"]["xia-chedan"]
    assert server == {"type": "http", "url": "https://qa.example.org/api/external/mcp",
                      "headers": {"Authorization": "Bearer ${XIA_CHEDAN_AGENT_TOKEN}"}}


def test_developers_page_offers_registering_only_to_visitors(app, client):
    page = client.get("/developers?lang=en").get_data(as_text=True)
    assert 'href="/register"' in page.split("<main", 1)[1] and "Register or log in." in page
    me = Person(app, username="devreader").register()
    page = me.http.get("/developers?lang=en").get_data(as_text=True)
    main = page.split("<main", 1)[1]
    assert "You are logged in as devreader." in main
    assert 'href="/register"' not in main and 'href="/login"' not in main


def test_developers_page_is_self_contained_and_csp_friendly(client):
    page = client.get("/developers").get_data(as_text=True)
    assert "<style" not in page
    assert not re.search(r"\sstyle=", page) and not re.search(r"\son\w+=", page)
    assert re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", page) == []
    for url in re.findall(r'(?:href|src)="([^"]+)"', page):
        assert url.startswith(("/", "#")), url   # nothing from another origin, no CDN


@pytest.mark.parametrize("path", ["/developers", MARKDOWN, "/docs/external-agents-openapi.json"])
def test_a_hostile_host_header_is_not_reflected_or_cached(open_client, path):
    r = open_client.get(path, environ_overrides={"HTTP_HOST": 'evil.example"><script>alert(1)</script>'})
    assert r.status_code == 200
    assert "<script>alert" not in r.get_data(as_text=True)
    assert r.headers["Cache-Control"] == "no-store"
    other = open_client.get(path, environ_overrides={"HTTP_HOST": "other.example:8443"})
    assert "http://other.example:8443/" in other.get_data(as_text=True)
    assert other.headers["Cache-Control"] == "no-store" and "Host" in other.headers["Vary"]


def test_question_answers_doc_is_served_with_this_address(open_client):
    r = open_client.get("/docs/question-answers-v073.md", base_url="http://talk.local:8123")
    text = r.get_data(as_text=True)
    assert r.status_code == 200 and r.mimetype == "text/markdown"
    assert "http://talk.local:8123" in text and "{{" not in text
    for word in ("intent", "questionVersion", "card_publish", "share", "requestId"):
        assert word in text
