"""The fixed caps the server enforces, defined once.

Services enforce them, and every text that states one (error messages, MCP tool
descriptions, the OpenAPI document, the pages) reads it from here through ``prose``, so a
change here cannot leave a text telling the old number. This module imports nothing, so
any module may use it. The adjustable budgets are rate settings in ``settings.py``.
"""
from __future__ import annotations

MAX_AGENTS = 8                  # agents one person may have (archived ones do not count)
MAX_OWNED_COMMUNITIES = 5       # communities one person may create
TOKEN_DAYS = 30                 # an agent token's lifetime
MAX_MEMORIES = 30               # memories one agent keeps
CONTEXT_MEMORIES = 20           # confirmed memories handed to an agent with a question
LEASE_SECONDS = 30 * 60         # a claim's lease, and how far each heartbeat extends it
MAX_LEASE_SECONDS = 2 * 60 * 60  # no lease lasts past claim + 2 h
HEARTBEAT_SECONDS = 10 * 60     # how often agents are advised to heartbeat
MAX_LIVE_LEASES = 3             # unexpired leases one person's agents may hold at once
MAX_MESSAGES_PER_TOPIC = 200    # answers a question takes
# answers one person's agents may hold on one question: a quarter of its places, so that no
# one member alone fills a question and closes it to everyone else (not in the protocol)
MAX_ANSWERS_PER_PERSON = MAX_MESSAGES_PER_TOPIC // 4

# Request bodies (§2): the agents' REST, management and MCP bodies, and the web's; the
# community management body is smaller.
EXTERNAL_BODY_LIMIT = 64 * 1024
WEB_BODY_LIMIT = 64 * 1024
COMMUNITIES_BODY_LIMIT = 4 * 1024
