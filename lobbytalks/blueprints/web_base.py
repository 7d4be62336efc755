"""What every web page shares: the blueprint, the signed-in user, rendering (its words and
small pieces: ``page_text``).

Pages read through the same services as the JSON APIs and render on the server; every
change a person makes goes through the JSON APIs from ``static/app.js``. Each ``web_*``
module keeps its routes in its own ``Pages``; ``lobbytalks.wiring`` mounts them on one
``web`` blueprint and registers the template helpers (``page_globals``) app-wide, so any
surface's template can extend ``base.html``.
"""
from __future__ import annotations

import logging
from functools import wraps
from typing import Any, Callable
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from flask import Blueprint, Response, current_app, render_template, request, url_for
from jinja2.utils import htmlsafe_json_dumps
from markupsafe import Markup

from .. import i18n
from ..auth import User, current_user
from ..errors import ApiError
from ..formatting import markdown, markdown_inline, markdown_text
from ..models.common import plain_int
from ..models.web import DEFAULT_COMMUNITY
from ..prose import fill
from ..security import has_control_chars
from ..services import accounts
from .common import base_url  # noqa: F401  (pages import it from here with bp, render)
from .community_text import community_about, community_about_marks, community_label  # noqa: F401
# (pages import these from here too)
from .page_text import (day, dir_of, distinct_labels, host_of, in_own_lang, lang,  # noqa: F401
                        lang_of, on_day, remembered, t, translator, when)

log = logging.getLogger("lobbytalks.web")
LANG_COOKIE_DAYS = 365
# What a path link keeps unquoted (RFC 3986 pchar and "/"); "%" is not among them: the
# path arrives decoded, so a "%" in it was "%25" and goes back as that.
_PATH_KEPT = "/:@!$&'()*+,;=-._~"


class Pages:
    """The pages one module serves, kept until ``blueprint`` mounts them: importing a module
    registers nothing."""

    def __init__(self) -> None:
        self.routes: list[tuple[str, str, dict[str, Any], Callable[..., Any]]] = []

    def get(self, rule: str, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return self._route(rule, "GET", options)

    def post(self, rule: str, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A form the browser itself sends (the site's script sends JSON to the APIs)."""
        return self._route(rule, "POST", options)

    def _route(self, rule: str, method: str, options: dict[str, Any]
               ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def keep(view: Callable[..., Any]) -> Callable[..., Any]:
            self.routes.append((rule, method, options, view))
            return view
        return keep


def blueprint(modules: tuple[Any, ...]) -> Blueprint:
    """One ``web`` blueprint (endpoints ``web.<view>``) serving every module's ``pages``."""
    bp = Blueprint("web", __name__)
    for module in modules:
        for rule, method, options, view in module.pages.routes:
            bp.add_url_rule(rule, view_func=view, methods=[method], **options)
    return bp


def lang_url(code: str) -> str:
    """The current page in another language (the choice is then kept in a cookie)."""
    args = request.args.to_dict()
    args["lang"] = code
    return f"{current_path()}?{urlencode(args)}"


def page_url(**changes: Any) -> str:
    """The current page with some query arguments changed; ``None`` removes one."""
    args = {k: v for k, v in request.args.items() if k != "lang"}
    for key, value in changes.items():
        if value is None:
            args.pop(key, None)
        else:
            args[key] = str(value)
    path = current_path()
    return f"{path}?{urlencode(args)}" if args else path


def current_path() -> str:
    """The requested path as a link that stays on this site, whatever was asked for (a 404
    page links to itself in the other language): quoted again, since a browser reads a
    decoded backslash or tab in ``/\\evil.example`` as ``//evil.example``, another site; and
    never starting with ``//``."""
    return "/" + quote(request.path, safe=_PATH_KEPT).lstrip("/")


# What a browser's URL parser (WHATWG) does before it reads an address: it drops tabs and
# newlines anywhere, trims C0 controls and spaces at both ends, and reads a backslash as "/".
_DROPPED_BY_BROWSERS = str.maketrans("", "", "\t\n\r")
_TRIMMED_BY_BROWSERS = "".join(map(chr, range(0x21)))


def safe_next(target: str | None) -> str:
    """A same-origin path to return to after logging in, judged as the browser will read
    it (``/\\t/evil.example`` is ``//evil.example`` to a browser); anything else goes home."""
    seen = (target or "").translate(_DROPPED_BY_BROWSERS).strip(_TRIMMED_BY_BROWSERS)
    seen = seen.replace("\\", "/")
    if not seen.startswith("/") or seen.startswith("//") or has_control_chars(seen):
        return "/"
    parts = urlsplit(seen)
    path = _without_dot_segments(parts.path)
    if parts.scheme or parts.netloc or path.startswith("//"):
        return "/"
    return urlunsplit(("", "", path, parts.query, parts.fragment))


def _without_dot_segments(path: str) -> str:
    """The path as a browser resolves it (RFC 3986 §5.2.4; "%2e" counts as a dot, as in
    the WHATWG parser): ``/.//evil.example`` is ``//evil.example``, another site."""
    out: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        dots = segment.replace("%2e", ".").replace("%2E", ".")
        last = i == len(segments) - 1
        if dots in (".", ".."):
            if dots == ".." and len(out) > 1:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/".join(out)


def login_required(view: Callable[..., Any]) -> Callable[..., Any]:
    """Send logged-out visitors to the login page, then back here."""
    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if current_user(request) is None:
            return redirect(url_for("web.login", next=request.full_path.rstrip("?"),
                                    needed="1"))
        return view(*args, **kwargs)
    return wrapper


def render(template: str, status: int = 200, **context: Any) -> Response:
    response = Response(render_template(template, **context), status=status,
                        mimetype="text/html")
    # Pages show a person's own data; never let a shared cache keep them.
    response.headers["Cache-Control"] = "no-store"
    response.headers["Vary"] = "Cookie, Accept-Language"
    return response


def viewer() -> User | None:
    return current_user(request)


def viewer_id() -> int | None:
    """The signed-in user's id, or None for a visitor (services take either)."""
    user = current_user(request)
    return user.id if user else None


def int_arg(name: str, default: int = 1, low: int = 1, high: int = 10000) -> int:
    """An integer query argument (a page number): ``default`` when absent.

    :raise 400 invalid_request: when present but not plain ASCII digits from ``low`` to
        ``high`` (``²``, ``-1``, 5,000 digits): the page says so rather than guessing.
    """
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    value = plain_int(raw)
    if value is None or not low <= value <= high:
        raise ApiError("invalid_request", f"{name} 必须是 {low} 到 {high} 的整数")
    return value


def choice_arg(name: str, choices: tuple[str, ...], default: str) -> str:
    value = request.args.get(name, default)
    return value if value in choices else default


# --- template helpers ----------------------------------------------------------------

def person_link(username: str) -> Markup:
    """A person's name linking to their public profile; a deleted account has none, and its
    placeholder name is said in words (the name itself kept in the title, for admins)."""
    if accounts.is_deleted_name(username):
        return Markup('<span class="person" title="{0}">{1}</span>').format(username,
                                                                           t("people.deleted"))
    return Markup('<a class="person" href="/u/{0}">{0}</a>').format(username)


def agent_owner(username: str) -> Markup:
    """Whose agent wrote an answer, linking to their profile; a deleted account in words,
    as ``person_link`` says it."""
    if accounts.is_deleted_name(username):
        return Markup('<span class="owner" title="{0}">{1}</span>').format(
            username, t("q.agent_of_deleted"))
    return Markup('<a class="owner" href="/u/{0}">{1}</a>').format(
        username, t("q.agent_of", name=username))


def island_label(island_id: str, name: str) -> str:
    """A category in the reader's language; one added later by an operator shows its name."""
    key = f"island.{island_id}"
    return t(key) if i18n.has(key) else name


def redirect(location: str, code: int = 302) -> Response:
    """A redirect with no body: Flask's carries an English HTML page ("Redirecting..."), the
    one text of the Chinese site in another language, seen where a client does not follow."""
    return Response(status=code, headers={"Location": location})


def page_globals() -> dict[str, Any]:
    code = lang()
    return {
        "t": translator(code), "lang": code, "html_lang": i18n.HTML_LANG[code], "languages": i18n.LANGUAGES,
        "lang_url": lang_url, "page_url": page_url, "user": current_user(request),
        "page_strings": page_strings(code), "static_url": static_url, "when": when,
        "on_day": on_day, "md": markdown,
        "md_inline": markdown_inline, "md_text": markdown_text, "person_link": person_link,
        "agent_owner": agent_owner, "deleted_name": accounts.is_deleted_name,
        "island_label": island_label, "community_label": community_label,
        "community_about": community_about, "community_about_marks": community_about_marks,
        "remembered": remembered, "host_of": host_of, "lang_of": lang_of, "dir_of": dir_of,
        "in_own_lang": in_own_lang, "lobby_id": DEFAULT_COMMUNITY,
    }


def page_strings(code: str) -> Markup:
    """``i18n.js_strings`` as the JSON the page embeds for ``static/app.js`` (what
    ``|tojson`` writes), with the numbers they state filled in (the script fills only what
    an answer says: ``{when}``, ``{reason}``), encoded once per language and app rather than
    on every page."""
    made = current_app.extensions.setdefault("lobbytalks.page_strings", {})
    if code not in made:
        numbers = translator(code).numbers
        strings = {key: fill(text, numbers) for key, text in i18n.js_strings(code).items()}
        made[code] = htmlsafe_json_dumps(strings, dumps=current_app.json.dumps)
    return made[code]


def static_url(filename: str) -> str:
    """``url_for("static", filename=...)``, built once per file (every page links four)."""
    made = current_app.extensions.setdefault("lobbytalks.static_urls", {})
    key = (request.script_root, filename)
    if key not in made:
        made[key] = url_for("static", filename=filename)
    return made[key]


def remember_language(response: Response) -> Response:
    if not request.query_string or request.path.startswith("/api/"):
        return response  # no ?lang= to remember, or not a page
    chosen = i18n.normalise_lang(request.args.get("lang"))
    if chosen and chosen != request.cookies.get(i18n.LANG_COOKIE):
        response.set_cookie(i18n.LANG_COOKIE, chosen, max_age=LANG_COOKIE_DAYS * 86400,
                            samesite="Lax", path="/")
    return response


def _posted_by_a_form() -> bool:
    """A browser without JavaScript sends a page's form to the page itself, encoded as a
    form: the pages take no such POST, and the reader should learn why."""
    return request.method == "POST" and request.mimetype in (
        "application/x-www-form-urlencoded", "multipart/form-data")


def error_page(error: ApiError) -> Response:
    """The site's own error page, in the reader's language, for any HTML path."""
    key = f"error.{error.status}"
    view = (request.endpoint or "").removeprefix("web.")
    detail_key = error.page_detail or f"err.page.{view}.{error.code}"
    if error.code == "method_not_allowed" and _posted_by_a_form():
        detail_key = "err.page.form_without_script"
    return render("error.html", status=error.status, code=error.status,
                  headline=t(key) if i18n.has(key) else t("error.title"),
                  detail=t(detail_key) if i18n.has(detail_key) else None)

