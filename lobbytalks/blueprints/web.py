"""The web pages people use: home, communities, accounts and their settings (questions,
agents and the other pages live in the other ``web_*`` modules; ``lobbytalks.wiring``
mounts them all on one ``web`` blueprint)."""
from __future__ import annotations

from flask import request, url_for

from .. import clock
from ..auth import end_session
from ..errors import ApiError
from ..guards import check_from_this_site
from ..models.common import COMMUNITY_ID
from ..services import accounts, communities, topics
from ..runtime import runtime
from .common import read_conn
from .web_browse import community_label, community_labels
from .web_base import (Pages, choice_arg, int_arg, login_required, redirect, render, safe_next,
                       viewer, viewer_id)
from .kept_pages import kept_page

pages = Pages()

HOME_QUESTIONS = 12
HOME_COMMUNITIES = 8


@pages.get("/")
@kept_page
def home():
    reader = viewer_id()
    listing = communities.list_page(read_conn(), reader, "all", 1)
    newest = topics.list_open(read_conn(), reader or 0, None, limit=HOME_QUESTIONS)
    names = {c["id"]: community_label(c["id"], c["name"]) for c in listing["communities"]}
    # Past the cap, /communities explains why there is no form: no link promises one here.
    may_create = reader is None or communities.may_create(read_conn(), reader)
    shown = listing["communities"][:HOME_COMMUNITIES]
    return render("home.html", newest=newest, names=names, communities=shown,
                  labels=community_labels(shown),
                  more_communities=len(listing["communities"]) > HOME_COMMUNITIES,
                  may_create=may_create)


@pages.get("/favicon.ico")
def favicon():
    """Browsers ask for /favicon.ico on pages without an icon link (and some always do)."""
    return redirect(url_for("static", filename="favicon.svg"), code=301)


@pages.get("/communities")
@kept_page
def communities_page():
    user = viewer()
    scope = choice_arg("scope", ("all", "joined"), "all") if user else "all"
    page = int_arg("page")
    listing = communities.list_page(read_conn(), user.id if user else None, scope, page)
    return render("communities.html", listing=listing, scope=scope,
                  labels=community_labels(listing["communities"]),
                  may_create=bool(user) and communities.may_create(read_conn(), user.id))


@pages.get("/c/<community_id>")
@kept_page
def community_page(community_id: str):
    if not COMMUNITY_ID.fullmatch(community_id):
        raise ApiError("not_found", "社区不存在")
    reader = viewer_id()
    community = communities.get_one(read_conn(), reader, community_id)
    q = request.args.get("q", "").strip()[:100]
    filters = {"q": q, "status": choice_arg("status", topics.STATUSES, "all"),
               "sort": choice_arg("sort", topics.SORTS, "new"), "page": int_arg("page")}
    listing = topics.list_in_community(read_conn(), reader, community_id, **filters)
    return render("community.html", community=community, listing=listing, filters=filters)


@pages.get("/login", defaults={"mode": "login"}, endpoint="login")
@pages.get("/register", defaults={"mode": "register"}, endpoint="register")
def account(mode: str):
    """Log in or register; someone already signed in goes straight on."""
    target = safe_next(request.args.get("next"))
    if viewer():
        return redirect(target)
    # "needed": sent here by a page that is only for people logged in (not by a link
    # the visitor chose): the page says so.
    return render("account.html", mode=mode, next_url=target,
                  needed=request.args.get("needed") == "1",
                  admin_contact=runtime().settings.admin_contact,
                  mail_available=runtime().settings.sends_mail)


@pages.get("/forgot-password", defaults={"mode": "forgot"}, endpoint="forgot_password")
@pages.get("/reset-password", defaults={"mode": "reset"}, endpoint="reset_password")
def password_recovery(mode: str):
    """Asking for a reset mail, and choosing a new password with its code. Open to anyone
    (someone signed in on a shared computer may be resetting another account of theirs)."""
    settings = runtime().settings
    return render("recovery.html", mode=mode, mail_available=settings.sends_mail,
                  admin_contact=settings.admin_contact,
                  # without the site's public address a mail carries the code, no link
                  links_mailed=bool(settings.public_url))


@pages.get("/settings")
@login_required
def settings_page():
    user = viewer()
    sessions = accounts.live_sessions(read_conn(), user.id, clock.now())
    return render("settings.html", sessions=sessions)


@pages.get("/logout")
def logout():
    if viewer() is None:
        return redirect("/")
    return render("logout.html")


@pages.post("/logout")
def logout_by_form():
    """Logging out where no script runs: the header's and the logout page's button are in
    a form the browser sends itself."""
    check_from_this_site(request)
    response = redirect("/", code=303)
    end_session(response, request)
    return response
