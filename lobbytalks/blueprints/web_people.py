"""People's pages: a public profile, and "download my data" from the settings page."""
from __future__ import annotations

import re

import orjson
from flask import Response

from .. import clock
from ..errors import ApiError
from ..runtime import runtime
from ..services import moderation, people
from .web_base import Pages, int_arg, login_required, render, viewer
from .kept_pages import kept_page
from .common import read_conn

pages = Pages()

USERNAME = re.compile(r"^[a-zA-Z0-9_]{1,24}$")


@pages.get("/u/<username>")
@kept_page
def profile_page(username: str):
    if not USERNAME.fullmatch(username):
        raise ApiError("not_found", "用户不存在")
    me = viewer()
    state = moderation.person_state(read_conn(), username) if me and me.is_admin else None
    person = people.profile(read_conn(), username, int_arg("page"))
    return render("profile.html", person=person, moderated=state)


@pages.get("/settings/data.json")
@login_required
def my_data():
    user = viewer()
    rt = runtime()
    data = people.export(read_conn(), rt.keyring, user.id, user.username, now=clock.now())
    # Indented: this file is for a person to read and keep, not for a program.
    response = Response(orjson.dumps(data, option=orjson.OPT_INDENT_2), mimetype="application/json")
    response.headers["Content-Disposition"] = (
        f'attachment; filename="lobbytalks-{user.username}.json"')
    return response
