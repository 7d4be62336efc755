"""Building blocks shared by every request model.

String limits are checked by our own validator (``Text``, which says how it counts) and
published as ``minLength``/``maxLength``.
"""
from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any, Callable, Literal, get_args

from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter,
                      ValidationError, ValidationInfo, field_validator)

from ..errors import ApiError
from ..security import ID_CHARS, ID_MAX_LENGTH
from ..textrules import (JS_TRIMMED, check_display_text, has_control_chars, has_nul, js_length,
                         js_trim)
from .messages import VALIDATION_MESSAGES

ID_PATTERN = rf"^[{ID_CHARS}]+$"
# Checks outside a model use fullmatch: Python's $ also matches before a final "\n".
ID = re.compile(rf"^[{ID_CHARS}]{{1,{ID_MAX_LENGTH}}}$")
TaskState = Literal["leased", "done", "failed", "expired"]
TASK_STATES: tuple[str, ...] = get_args(TaskState)
COMMUNITY_ID_PATTERN = r"^[a-zA-Z0-9_-]+$"
COMMUNITY_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # for checks outside a model
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
USERNAME_PATTERN = r"^[a-zA-Z0-9_]+$"
USERNAME_LENGTH = (3, 24)
# Some character that JavaScript's trim() keeps (a search, not a whole match), written out:
# \S differs from it in Python's re (U+001C-U+001F, U+0085, U+FEFF), with which Python
# validators read patterns.
NOT_BLANK_PATTERN = "[^" + "".join(f"\\u{ord(c):04x}" for c in JS_TRIMMED) + "]"
# The models' patterns said in words, rather than as a regular expression.
PATTERN_RULES = {
    UUID_PATTERN: "必须是 UUID，如 123e4567-e89b-42d3-a456-426614174000",
    ID_PATTERN: f"只能包含英文字母、数字和 {' '.join(ID_CHARS.removeprefix('a-zA-Z0-9'))}",
    COMMUNITY_ID_PATTERN: "只能包含英文字母、数字、_ 和 -",
    USERNAME_PATTERN: "只能包含英文字母、数字和下划线",
}


def Text(
    min_length: int = 0,
    max_length: int | None = None,
    *,
    strip_min: bool = False,
    single_line: bool = False,
    display: bool = False,
    pattern: str | None = None,
    description: str | None = None,
    nul_names_nothing: bool = False,
    utf16: bool = False,
) -> Any:
    """A string limited in characters (code points), as the contract's ``maxLength`` counts
    them, or with ``utf16`` in UTF-16 code units, as the protocol measures an answer (§5).

    ``strip_min`` applies the minimum to the trimmed value (a title of spaces is empty);
    ``single_line`` rejects control characters; NUL is always rejected. ``display`` marks
    text shown to other people (names, titles, perspectives, descriptions) and applies
    :func:`textrules.check_display_text` to it. ``nul_names_nothing`` is for an id that is
    looked up: one holding NUL is as unknown as any other id that names nothing (404), as
    no id the server makes has one, and it never reaches the database (PostgreSQL refuses
    NUL in text).
    """
    compiled = re.compile(pattern) if pattern else None
    length = js_length if utf16 else len

    def check(value: str) -> str:
        measured = js_trim(value) if strip_min else value
        if strip_min and min_length and not measured:
            raise ValueError("不能为空或只有空格")
        if length(measured) < min_length:
            raise ValueError(f"至少需要 {min_length} 个字符")
        if max_length is not None and length(value) > max_length:
            raise ValueError(f"最多 {max_length} 个字符")
        if has_nul(value):
            raise _unknown_id() if nul_names_nothing else ValueError("不能包含 NUL 字符")
        if single_line and has_control_chars(value):
            raise ValueError("不能包含控制字符")
        if display:
            check_display_text(value, single_line=single_line, required=min_length > 0)
        if compiled and not compiled.fullmatch(value):
            raise ValueError(pattern_message(pattern))
        return value

    schema = _published(min_length, max_length, pattern, blank_refused=strip_min and min_length > 0)
    return Annotated[str, AfterValidator(check), Field(json_schema_extra=schema, description=description)]


def _published(min_length: int, max_length: int | None, pattern: str | None, *,
               blank_refused: bool) -> dict[str, Any]:
    """What the OpenAPI document and MCP's tools say of a ``Text``: the lengths, and the
    pattern, or else that a value of spaces is refused (so that a client checking its
    arguments before it sends them refuses it as the server would)."""
    schema: dict[str, Any] = {"minLength": min_length}
    if max_length is not None:
        schema["maxLength"] = max_length
    if pattern or blank_refused:
        schema["pattern"] = pattern or NOT_BLANK_PATTERN
    return schema


def _unknown_id() -> ApiError:
    return ApiError("not_found", "没有这个 id（服务端的 id 里没有 NUL 字符）")


Id = Text(1, 64, pattern=ID_PATTERN)
# An id a request names to look something up, where the contract gives it a length only:
# any string within it is taken, and one that names nothing is 404 like any unknown id
# (IdRef for communities, whose impossible ids the protocol answers 400).
IdRef = Text(1, 64)
LookupId = Text(1, 64, nul_names_nothing=True)


class Strict(BaseModel):
    """Unknown fields are errors (``additionalProperties: false``), and so is ``null`` for a
    field one may leave out: the published schemas show such a field with its own type only
    (``schemas.publish``), so null is refused as any other wrong type is, at its name."""
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    @field_validator("*", mode="before")
    @classmethod
    def _omit_rather_than_null(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and not cls.model_fields[info.field_name].is_required():
            raise ValueError("不能为 null；不需要时请省略此字段")
        return value


def _first_problem(errors: list[Any]) -> tuple[Any, list[str]]:
    """The error to report, and the types wanted when the value is of none of them.

    A value that fits no member of a union (a string or a list) gets one error per member;
    "must be a string" for a list that is too long says nothing useful, so a member's real
    problem wins over the other members' type mismatches."""
    first = errors[0]
    same_field = [e for e in errors if e["loc"][:1] == first["loc"][:1]]
    problem = next((e for e in same_field if not e["type"].endswith("_type")), None)
    if problem is not None:
        return problem, []
    wanted = [VALIDATION_MESSAGES[e["type"]].removeprefix("必须是") for e in same_field
              if e["type"] in VALIDATION_MESSAGES]
    return first, list(dict.fromkeys(wanted))


def pattern_message(pattern: str) -> str:
    """What a value that does not match ``pattern`` is told, whoever checked it."""
    rule = PATTERN_RULES.get(pattern)
    return rule if rule is not None else VALIDATION_MESSAGES["string_pattern_mismatch"].format(
        pattern=pattern)


def error_location(exc: ValidationError) -> tuple[tuple[Any, ...], str]:
    return _described(*_first_problem(exc.errors(include_url=False)))


def error_locations(exc: ValidationError) -> list[tuple[tuple[Any, ...], str]]:
    """Every field's problem, as ``error_location`` tells the first: one per field, and one
    per field of each item of a list (an evidence item's title and excerpt each)."""
    fields: dict[tuple[Any, ...], list[Any]] = {}
    for error in exc.errors(include_url=False):
        loc = tuple(error.get("loc", ()))
        fields.setdefault(loc[:3] if len(loc) > 1 and isinstance(loc[1], int) else loc[:1],
                          []).append(error)
    return [_described(*_first_problem(errors)) for errors in fields.values()]


def _described(first: Any, mismatches: list[str]) -> tuple[tuple[Any, ...], str]:
    loc = tuple(first.get("loc", ()))
    kind, context = first.get("type", ""), first.get("ctx") or {}
    if len(mismatches) > 1:  # fits no member of a union: "a string or an array"
        return loc, "必须是" + "或".join(mismatches)
    if kind == "string_pattern_mismatch":
        return loc, pattern_message(str(context.get("pattern", "")))
    template = VALIDATION_MESSAGES.get(kind)
    if template is None:
        return loc, first.get("msg", "invalid").removeprefix("Value error, ")
    try:
        return loc, template.format(**{key: str(value).replace(" or ", " 或 ")
                                       for key, value in context.items()})
    except KeyError:  # a context without the placeholder: pydantic's own words, then
        return loc, first.get("msg", "invalid")


def parse_model(
    model: type[BaseModel],
    data: dict[str, Any],
    *,
    strict: bool = True,
    code_for: Callable[[tuple[Any, ...]], str] | None = None,
    status: int = 400,
) -> Any:
    """Validate ``data``; the first problem becomes an ``ApiError`` naming the field."""
    try:
        return model.model_validate(data, strict=strict)
    except ValidationError as exc:
        loc, message = error_location(exc)
        code = code_for(loc) if code_for else "invalid_request"
        where = field_path(loc)
        raise ApiError(code, f"{where}: {message}" if where else message, status=status) from None


def operation_query(args: dict[str, Any], own: type[BaseModel],
                    declared: tuple[type[BaseModel], ...]) -> dict[str, Any]:
    """A GET's query string as ``own`` (the model of the action asked for) takes it.

    The contract lists one set of query parameters for the whole GET operation, the fields
    of all its actions' models (``declared``, what the served OpenAPI lists). A parameter
    ``own`` lacks but another of them declares is checked by that model's rule (a wrong
    value is a 400 naming it) and then left out: a query the contract allows is never
    refused for it. A parameter nobody declares stays, for ``own`` to refuse."""
    wanted: dict[str, Any] = {}
    for name, value in args.items():
        declaring = None if name in own.model_fields else next(
            (model for model in declared if name in model.model_fields), None)
        if declaring is None:
            wanted[name] = value
            continue
        _check_field(declaring, name, value)
    return wanted


def check_declared(args: dict[str, Any], declared: type[BaseModel],
                   skip: tuple[str, ...] = ()) -> None:
    """Every parameter of ``args`` that ``declared`` (a GET operation's documented query)
    lists, but ``skip``, within its rule: a 400 naming it, whichever view then uses it."""
    for name, value in args.items():
        if name in declared.model_fields and name not in skip:
            _check_field(declared, name, value)


def _check_field(model: type[BaseModel], name: str, value: Any) -> None:
    try:
        _field_rule(model, name).validate_python(value)
    except ValidationError as exc:
        raise ApiError("invalid_request", f"{name}: {error_location(exc)[1]}") from None


@cache
def _field_rule(model: type[BaseModel], name: str) -> TypeAdapter:
    field = model.model_fields[name]
    rule = Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation
    return TypeAdapter(rule)


_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "list", "dict", "none"})  # union members


def field_path(loc: tuple[Any, ...]) -> str:
    """A field's place as people count it: "evidence[1].title" for the first evidence
    item (as [S1] cites it). The validator's own steps in ``loc`` ("function-after[...]",
    the member type of a union) are left out."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part + 1}]"
        elif isinstance(part, str) and _FIELD_NAME.fullmatch(part) and part not in _TYPE_TAGS:
            name = part if len(part) <= 40 else part[:40] + "…"  # an unknown key of any length
            path += f".{name}" if path else name
    return path


_PLAIN_INT = re.compile(r"[0-9]{1,4000}")  # int() refuses more than 4,300 digits


def plain_int(value: Any) -> int | None:
    """A query-string integer of ASCII digits (``str.isdigit`` takes ``²``), else None."""
    return int(value) if isinstance(value, str) and _PLAIN_INT.fullmatch(value) else None


def query_args(args: Any, int_fields: tuple[str, ...] = ("page",)) -> dict[str, Any]:
    """Query-string values as a dict, integers converted only when they are plain digits.

    :raise 400 invalid_request: a parameter given twice (``topic=A&topic=B``): which one is
        meant is not for the server to guess, nor for two layers to guess differently.
    """
    data: dict[str, Any] = {}
    repeated = getattr(args, "getlist", None)
    for key in args.keys():
        if repeated is not None and len(repeated(key)) > 1:
            raise ApiError("invalid_request", f"{key[:40]}: 只能出现一次")
        value = args.get(key)
        number = plain_int(value) if key in int_fields else None
        data[key] = value if number is None else number
    return data
