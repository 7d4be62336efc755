"""Whole numbers in requests, counted as JSON Schema counts them."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError


def _integral(value: Any) -> Any:
    """2.0 is the integer 2, as JSON Schema counts it; true stays what it is. A string is
    refused: a query string's plain digits arrive converted (``query_args``), and the lax
    parsing of a query would otherwise read "1.0", "+1" or " 1" as 1."""
    if isinstance(value, str):
        raise PydanticCustomError("int_type", "")
    return int(value) if isinstance(value, float) and value.is_integer() else value


def Whole(least: int, most: int) -> Any:
    """An integer field within [least, most] that takes 2.0 for 2, as JSON Schema does."""
    return Annotated[int, Field(ge=least, le=most), BeforeValidator(_integral)]


Page = Whole(1, 10000)
