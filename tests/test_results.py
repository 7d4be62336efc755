"""Result validation (§5 + contract 1.0.2): every limit, the URL policy, citations, secrets."""
from __future__ import annotations

import copy
import time

import pytest

from conftest import Person, count, good_result
from helpers import assert_external_error
from qa_helpers import claim_ok
from test_mcp import McpClient, business_error


@pytest.fixture
def leased(agent, topic):
    """The agent and the task it holds on the asker's question."""
    return agent, claim_ok(agent, topic)["task"]["id"]


NO_CITATION = "不需要外部来源：这是一个可以由推理直接得出的结论，附带理由摘要。"


def evidence(**overrides):
    item = copy.deepcopy(good_result()["evidence"][0])
    item.update(overrides)
    return item


def submit(leased, **overrides):
    agent, task = leased
    return agent.post("submit_result", taskId=task, **good_result(**overrides))


REJECTED = [
    # (overrides, status, code)
    ({"conclusion": "太短了"}, 400, "invalid_request"),
    ({"conclusion": " " * 10 + "二十九个字" * 5 + " " * 20}, 400, "invalid_request"),
    ({"conclusion": "长" * 201}, 400, "invalid_request"),
    ({"conclusion": 42}, 400, "invalid_request"),
    ({"reasoningSummary": "理" * 1601}, 400, "invalid_request"),
    ({"uncertainties": "不" * 601}, 400, "invalid_request"),
    ({"uncertainties": ["a", "b", "c", "d", "e"]}, 400, "invalid_request"),
    ({"uncertainties": ["条" * 241]}, 400, "invalid_request"),
    ({"uncertainties": [""]}, 400, "invalid_request"),
    ({"conditions": ["c"] * 5}, 400, "invalid_request"),
    ({"conditions": ["条" * 241]}, 400, "invalid_request"),
    ({"evidence": None}, 400, "invalid_result"),
    ({"evidence": "https://example.com"}, 400, "invalid_result"),
    ({"evidence": [evidence(url=f"https://example.com/{i}") for i in range(9)]}, 400, "invalid_result"),
    ({"evidence": [evidence(title="")]}, 400, "invalid_result"),
    ({"evidence": [evidence(title="t" * 241)]}, 400, "invalid_result"),
    ({"evidence": [evidence(excerpt="e" * 1201)]}, 400, "invalid_result"),
    ({"evidence": [{**evidence(), "extra": 1}]}, 400, "invalid_result"),
    ({"toolRuns": [{"name": "x", "summary": "s", "status": "maybe"}]}, 400, "invalid_result"),
    ({"toolRuns": [{"name": "x" * 81, "summary": "s", "status": "success"}]}, 400, "invalid_result"),
    ({"toolRuns": [{"name": "x", "summary": "s" * 1201, "status": "success"}]}, 400, "invalid_result"),
    ({"toolRuns": [{"name": "x", "inputSummary": "i" * 201, "summary": "s", "status": "error"}]},
     400, "invalid_result"),
    ({"toolRuns": [{"name": "x", "summary": "s", "status": "success"}] * 13}, 400, "invalid_result"),
    ({"evidence": [evidence(kind="video")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="http://www.sqlite.org/backup.html")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://127.0.0.1/x")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://localhost/x")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://intranet/x")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://site.test/x")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://example.onion/x")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://www.sqlite.org:8443/x")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://user@www.sqlite.org/x")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://www.sqlite.org/x?token=abc")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://www.sqlite.org/x?X-Amz-Signature=abc")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://" + "a" * 1500 + ".com/")]}, 400, "invalid_source"),
    ({"evidence": [evidence(retrievedAt="yesterday")]}, 400, "invalid_source"),
    # the contract's format is date-time: a date alone, or a time without its zone, is not
    ({"evidence": [evidence(retrievedAt="2026-09-30")]}, 400, "invalid_source"),
    ({"evidence": [evidence(retrievedAt="2026-09-30T08:00:00")]}, 400, "invalid_source"),
    ({"evidence": [evidence(retrievedAt="2999-01-01T00:00:00Z")]}, 400, "invalid_source"),
    ({"evidence": [evidence(), evidence(url="https://www.sqlite.org/backup.html#top")]},
     400, "invalid_source"),
    # the same source however its host is written, or with an empty query or path
    ({"evidence": [evidence(), evidence(url="https://WWW.SQLite.org/backup.html")]},
     400, "invalid_source"),
    ({"evidence": [evidence(), evidence(url="HTTPS://www.sqlite.org/backup.html?")]},
     400, "invalid_source"),
    ({"evidence": [evidence(url="https://www.sqlite.org"), evidence(url="https://www.sqlite.org/")]},
     400, "invalid_source"),
    ({"conclusion": "引用了不存在的来源 [S2]，所以应当被拒绝，这是测试用的结论。"}, 400, "invalid_citation"),
    ({"conclusion": "引用了不存在的来源 [s2]，小写也是引用，所以应当被拒绝，这是测试用的结论。"},
     400, "invalid_citation"),
    ({"conclusion": "引用了第零个来源 [S0]，编号从 1 开始，所以应当被拒绝，这是测试用的结论。"},
     400, "invalid_citation"),
    # however a citation is written, each number in it must have its evidence
    ({"conclusion": "两个来源都说要用在线备份 API 得到一致副本 [S1, S2]，不要直接复制文件。"},
     400, "invalid_citation"),
    ({"conclusion": "三个来源都说要用在线备份 API 得到一致副本 [S1-S3]，不要直接复制文件。"},
     400, "invalid_citation"),
    ({"conclusion": "来源说要用在线备份 API 得到一致副本 [S 2]，不要直接复制文件，这是结论。"},
     400, "invalid_citation"),
    ({"conclusion": "来源说要用在线备份 API 得到一致副本［S2］，不要直接复制文件，这是结论。"},
     400, "invalid_citation"),
    ({"conclusion": "引用了历史发言 [M1]，所以应当被拒绝，这是测试用的结论文字。"}, 400, "invalid_citation"),
    ({"reasoningSummary": "参见 [M2:S1] 的说法，这种历史引用不被接受。"}, 400, "invalid_citation"),
    ({"evidence": [], "conclusion": NO_CITATION, "reasoningSummary": "太短", "toolRuns": []},
     400, "invalid_result"),
    ({"evidence": [], "conclusion": NO_CITATION, "reasoningSummary": "",
      "toolRuns": [{"name": "calc", "summary": "失败的工具不算支持依据，即使摘要足够长足够长足够长。",
                    "status": "error"}]}, 400, "invalid_result"),
    ({"reasoningSummary": "密钥是 sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"}, 400, "sensitive_content"),
    ({"uncertainties": ["-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"]},
     400, "sensitive_content"),
    ({"toolRuns": [{"name": "curl", "inputSummary": "Authorization: Bearer abcdefghijklmnopqrstuvwxyz123",
                    "summary": "ok", "status": "success"}]}, 400, "sensitive_content"),
    # URL fields meet the URL policy first: credentials in a URL are a refused source (§5)
    ({"evidence": [evidence(url="https://admin:hunter2@www.sqlite.org/x")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://:hunter2@www.sqlite.org/x",
                            excerpt="AKIA" + "IOSFODNN7EXAMPLE")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://www.sqlite.org/x?q=ghp_" + "A" * 36)]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://169.254.169.254.nip.io/latest/meta-data/")]},
     400, "invalid_source"),
    ({"evidence": [evidence(url="https://api.localtest.me/x")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://www.sqlite.org/x;jsessionid=ABC123")]}, 400, "invalid_source"),
    ({"evidence": [evidence(url="https://www.sqlite.org/x?%2561uth_token=abc")]}, 400, "invalid_source"),
    # every text field of a submission is scanned, after folding invisible characters
    ({"conclusion": "结论：AKIA\u200b" + "IOSFODNN7EXAMPLE 这把钥匙可以访问备份桶，所以要先轮换它。"},
     400, "sensitive_content"),
    ({"conditions": ["当令牌是 gh\u200dp_" + "B" * 36 + " 时"]}, 400, "sensitive_content"),
    ({"uncertainties": "密钥 sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + " 可能已泄露"}, 400, "sensitive_content"),
    ({"evidence": [evidence(title="glpat-" + "xY3zA9bCxY3zA9bCdE5f")]}, 400, "sensitive_content"),
    ({"evidence": [evidence(excerpt="-----begin  openssh  private key-----")]}, 400, "sensitive_content"),
    ({"toolRuns": [{"name": "hf_" + "aBcDeFgHiJ" * 3 + "kLmN", "summary": "ok", "status": "success"}]},
     400, "sensitive_content"),
    ({"toolRuns": [{"name": "curl", "summary": "ok", "status": "success",
                    "inputSummary": "https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/"
                                    "xYz123AbC456dEf789gHi012"}]}, 400, "sensitive_content"),
    ({"unknownField": "x"}, 400, "invalid_request"),
]


@pytest.mark.parametrize("overrides,status,code", REJECTED)
def test_rejected_results_change_nothing(leased, db, overrides, status, code):
    assert_external_error(submit(leased, **overrides), status, code)
    assert count(db, "messages") == 0 and count(db, "memories") == 0
    assert tuple(db.one("SELECT state, result_hash FROM tasks")) == ("leased", None)


@pytest.mark.parametrize("uncertainties, said", [
    (["a"] * 5, "uncertainties: 最多 4 项"),
    (["条" * 241], "uncertainties[1]: 最多 240 个字符"),
    ([" "], "uncertainties[1]: 不能为空或只有空格"),
    ("不" * 601, "uncertainties: 最多 600 个字符"),
    (5, "uncertainties: 必须是字符串或数组"),
])
def test_a_refused_uncertainties_is_told_what_is_wrong_with_the_form_it_was_sent_in(
        leased, uncertainties, said):
    """A string or a list of up to four: a list's own problem is named, not "must be a
    string" (the other form's mismatch)."""
    r = submit(leased, uncertainties=uncertainties)
    assert_external_error(r, 400, "invalid_request")
    assert r.get_json()["error"] == said


def test_own_agent_token_is_sensitive(leased, db):
    agent, _ = leased
    r = submit(leased, reasoningSummary=f"我用的 Token 是 {agent.token}")
    assert_external_error(r, 400, "sensitive_content")
    assert agent.token not in r.get_data(as_text=True)


def _spaced(token: str) -> str:
    return " ".join(token)


def _capital_prefix(token: str) -> str:
    return "LBT" + token[3:]


def _hex(token: str) -> str:
    return token.encode().hex()


def _split_by_lines(token: str) -> str:
    return token[:20] + "\n" + token[20:]


def _fullwidth(token: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) for c in token)


def _body_base64(token: str) -> str:
    """What follows the public "lbt_", in base64: decoded and prefixed, the token works."""
    return __import__("base64").b64encode(token[4:].encode()).decode()


def _body_hex(token: str) -> str:
    return token[4:].encode().hex()


@pytest.mark.parametrize("disguise", [_spaced, _capital_prefix, _hex, _split_by_lines,
                                      _fullwidth, _body_base64, _body_hex])
def test_own_agent_token_in_disguise_is_sensitive_on_rest_and_mcp(leased, app, db, disguise):
    """Only the request carrying the token can tell it spelt out or encoded: what a model
    talked into printing its own token would send. Nothing is stored, the lease holds."""
    agent, task = leased
    leak = disguise(agent.token)
    r = submit(leased, reasoningSummary="我用的 Token 是 " + leak)
    assert_external_error(r, 400, "sensitive_content")
    assert r.get_json()["error"].startswith("reasoningSummary: ")
    assert leak not in r.get_data(as_text=True)
    r = agent.post("fail_task", taskId=task, error="卡住了：" + leak)
    assert_external_error(r, 400, "sensitive_content")
    mcp = McpClient(app, agent.token)
    result = mcp.call("submit_result", {"taskId": task, **good_result(conditions=[leak])})
    assert business_error(result, 400, "sensitive_content")["error"].startswith("conditions: ")
    assert count(db, "messages") == 0
    assert tuple(db.one("SELECT state, error FROM tasks")) == ("leased", None)


def test_someone_elses_token_spelt_out_is_not_the_callers(leased, app, db):
    """The disguises are looked for with the caller's own token only (the server keeps no
    other): another's, spelt out, is not recognised; plainly written, its shape is."""
    other = Person(app).register().new_agent()
    assert submit(leased, reasoningSummary="示例：" + _spaced(other.token) + "。").status_code == 200
    assert count(db, "messages") == 1


def test_texts_built_to_make_the_scans_backtrack_are_answered_at_once(leased, db):
    """The caller's token with its letters tripled (every gap length of the woven search)
    and a credential of single capitals ("A.A.…", 2^n readings of prose) each held the
    server's one writer for hours; the bound only catches that."""
    agent, task = leased
    letters = [c for c in agent.token if c.isalnum()]
    started = time.monotonic()
    r = submit(leased, reasoningSummary="Bearer " + "A." * 60 + "1")
    assert_external_error(r, 400, "sensitive_content")
    r = agent.post("fail_task", taskId=task, error="".join(c * 3 for c in letters[:40]) + "0" * 60)
    assert r.status_code == 200  # not the token: the task fails with that text as its reason
    assert time.monotonic() - started < 5
    assert count(db, "messages") == 0


ACCEPTED = [
    {},
    {"evidence": [], "conclusion": NO_CITATION, "reasoningSummary": "纯数学推理：两边同时平方后再比较大小，因为平方函数在正实数上单调递增，所以结论对所有正实数成立。"},
    {"evidence": [], "conclusion": NO_CITATION, "reasoningSummary": "",
     "toolRuns": [{"name": "python", "summary": "运行 Python 脚本验证了 1000 个随机样本，每一个样本的结果都符合上面的结论。",
                   "status": "success"}]},
    {"conclusion": "😀" * 15},  # 30 UTF-16 code units
    {"conclusion": "结" * 200, "reasoningSummary": "理" * 1600},
    {"uncertainties": "旧格式的字符串不确定性仍被接受。"},
    {"uncertainties": ["条" * 240] * 4, "conditions": ["件" * 240] * 4},
    {"evidence": [evidence(url=f"https://docs{i}.example.com/p", kind=k)
                  for i, k in enumerate(["snippet", "abstract", "metadata", "page"] * 2)]},
    {"evidence": [evidence(retrievedAt="2026-10-01T08:00:00+08:00")]},
    {"toolRuns": [{"name": "t", "summary": "s", "status": "error"}] * 12},
    # a path's case and a query are part of what a source is
    {"evidence": [evidence(url="https://www.sqlite.org/Backup.html"),
                  evidence(url="https://www.sqlite.org/backup.html"),
                  evidence(url="https://www.sqlite.org/backup.html?v=2")]},
]


@pytest.mark.parametrize("overrides", ACCEPTED)
def test_accepted_results(leased, db, overrides):
    r = submit(leased, **overrides)
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert body["provenance"] == "external-self-reported"
    row = db.one("SELECT provenance, sources FROM messages WHERE id = :id",
                     {"id": body["messageId"]})
    assert row["provenance"] == "external-self-reported"


def test_fragment_is_removed_and_kind_defaults(leased, db):
    item = evidence(url="https://www.sqlite.org/backup.html#section-2")
    del item["kind"]
    r = submit(leased, evidence=[item])
    assert r.status_code == 200
    import json
    stored = json.loads(db.value("SELECT sources FROM messages"))
    assert stored[0]["url"] == "https://www.sqlite.org/backup.html"
    assert stored[0]["kind"] == "snippet"


@pytest.mark.parametrize("conclusion", [
    "在线备份 API [S1] 与 WAL 模式 [S2] 配合，可在服务运行时取得一致副本。",
    "在线备份 API 与 WAL 模式配合，可在服务运行时取得一致副本 [S1, S2]。",
    "在线备份 API 与 WAL 模式配合，可在服务运行时取得一致副本 [S1-S2]［s 2］。",
    "在线备份 API 与 WAL 模式配合 [S1][S2]，可在服务运行时取得一致副本 [S 1]。",
])
def test_citations_within_range_are_accepted(leased, conclusion):
    two = [evidence(), evidence(url="https://www.sqlite.org/wal.html")]
    r = submit(leased, evidence=two, conclusion=conclusion)
    assert r.status_code == 200, r.get_json()


def test_a_citation_group_is_named_in_its_refusal(leased):
    body = submit(leased, conclusion="两个来源都说要用在线备份 API 得到一致副本 [S1，S2]，不要直接复制文件。"
                  ).get_json()
    assert body["code"] == "invalid_citation" and "[S1，S2]" in body["error"], body
    assert body["error"].startswith("[S2] ")



@pytest.mark.parametrize("cited", ["[S٢]", "[S２]", "［S２］", "[S\u200b2]", "[S\u20602]",
                                   "[\u200bS2]", "[S2\u200b]", "[S\u00ad2]", "[\u0405 2]"])
def test_a_citation_in_other_digits_or_with_invisible_characters_must_exist_too(leased, cited):
    """A reader takes "[S٢]" (Arabic-Indic two), "[S２]" (fullwidth) or "[S\u200b2]" for
    [S2]: with one source they cited nothing and were stored all the same."""
    text = f"在线备份 API [S1] 可以取得一致副本，另有佐证 {cited}，请放心使用。"
    body = submit(leased, conclusion=text).get_json()
    assert body["code"] == "invalid_citation" and body["error"].startswith("[S2] "), body
    two = [evidence(), evidence(url="https://www.sqlite.org/wal.html")]
    assert submit(leased, evidence=two, conclusion=text).status_code == 200


@pytest.mark.parametrize("fields, named", [
    ({"uncertainties": [1]}, "uncertainties: "),   # was "uncertainties.function-after[check(), str]"
    ({"evidence": [evidence(), {**evidence(url="https://b.example.org/x"), "title": 1}]},
     "evidence[2].title: "),                        # numbered as [S2] cites it, not "evidence.1"
    ({"toolRuns": [{"name": "x", "summary": "s", "status": "bad"}]}, "toolRuns[1].status: "),
])
def test_an_invalid_field_is_named_as_people_count_it(leased, fields, named):
    body = submit(leased, **fields).get_json()
    assert body["error"].startswith(named), body
    assert "function-after" not in body["error"] and "str]" not in body["error"]
