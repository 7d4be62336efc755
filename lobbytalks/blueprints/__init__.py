"""One module per HTTP surface (``web_*`` modules together make the pages, ``community_*``
modules the actions of /api/community). ``lobbytalks.wiring`` mounts them all: importing
one registers nothing."""
