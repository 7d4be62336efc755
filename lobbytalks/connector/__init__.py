"""``lobbytalks agent``: the connector a person runs so their own agent answers by itself (§8).

It holds the Agent Token, speaks the REST protocol to a LobbyTalks server and hands each
claimed question to a research harness (codex, claude or any command) that never sees the
token. It shares the request models and the result rules with the server and never imports
Flask or the server's database code.

``client`` speaks the protocol with the §12 retry rules, ``state`` keeps attempts and results
crash-safe on disk, ``harness`` (with ``prompt``) runs the research, ``attempt`` drives one
claimed question to its end, ``scheduler`` chooses what to answer, ``events`` reports,
``commands`` declares the command line and ``app`` builds the four subcommands from it.
"""
