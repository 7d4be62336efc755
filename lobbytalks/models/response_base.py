"""The pieces every response model is made of: bounded strings, ids, times, and the two
kinds of shape (open to later fields, or closed as the contract closes it)."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from .common import ID_PATTERN


def Str(min_length: int | None = None, max_length: int | None = None, *,
        pattern: str | None = None, description: str | None = None) -> Any:
    return Annotated[str, Field(min_length=min_length, max_length=max_length, pattern=pattern,
                                description=description)]


Ref = Str(1, 64)
PatternRef = Str(1, 64, pattern=ID_PATTERN)
UnixTime = Annotated[int, Field(description="Unix 秒")]
Count = Annotated[int, Field(ge=0)]
Version = Annotated[int, Field(ge=1)]
PageNumber = Annotated[int, Field(ge=1, le=10000)]


class Doc(BaseModel):
    """A response shape; extra fields may be added in later versions."""


class Closed(BaseModel):
    """A response shape the contract closes (``additionalProperties: false``)."""
    model_config = ConfigDict(extra="forbid")
