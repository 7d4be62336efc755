"""A valid body for each POST action of every surface, with "$TOPIC"-style stand-ins for
ids a test fills in. Changing one field of one of them reaches the code behind validation."""
from __future__ import annotations

from conftest import good_result

AGENT_BODIES = {
    "join_community": {"community": "lobby"},
    "claim_task": {"topic": "$TOPIC", "requestId": "8d6f6f1e-5b1c-4a57-9d0b-3f2a1c9e7b10"},
    "heartbeat": {"taskId": "$TASK"},
    "fail_task": {"taskId": "$TASK", "error": "无法访问来源"},
    "submit_result": {"taskId": "$TASK", **good_result()},
}
MANAGE_BODIES = {
    "register": {"name": "查证虾", "perspective": "先给结论", "client": "codex", "role": 0},
    "rotate": {"profile": "$PROFILE"},
    "revoke": {"tokenId": "$TOKEN_ID"},
    "cancel_task": {"taskId": "$TASK"},
}
COMMUNITIES_BODIES = {
    "create": {"name": "新社区", "description": "介绍"},
    "join": {"community": "lobby"},
    "leave": {"communityId": "lobby"},
}
WEB_BODIES = {
    "register": {"username": "fuzzer_1", "password": "correct horse 1"},
    "login": {"username": "fuzzer_1", "password": "correct horse 1"},
    "topic": {"title": "一个问题", "description": "背景", "community": "lobby",
              "island": "commons", "intent": "fact", "privateContext": "私密"},
    "revise": {"topic": "$TOPIC", "title": "改过的问题", "note": "补充"},
    "close": {"topic": "$TOPIC"},
    "share": {"message": "m1", "sharePublic": True},
    "card_preview": {"topic": "$TOPIC"},
    "memory_confirm": {"memory": "mem1"},
    "memory_switch": {"profile": "$PROFILE", "enabled": False},
    "logout": {},
}
