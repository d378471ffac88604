"""User-defined classes used by the golden vectors.

The module is imported as the top-level module ``pytypes`` (``vectors/`` is put on
``sys.path`` by ``generate.py`` and ``check_python.py``), so every ext payload that
names one of these classes carries the module name ``"pytypes"``.

Keep the definitions stable: changing a field order or a default changes the bytes
of the committed vectors.
"""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from enum import Enum, IntEnum, StrEnum
from typing import Any, NamedTuple, Optional

import pydantic
import pydantic.v1


class Color(Enum):
    RED = "red"
    GREEN = "green"
    BLUE = 3
    TUPLE = (1, "a")


class Priority(IntEnum):
    LOW = 1
    HIGH = 2
    HUGE = 2**40


class Mode(StrEnum):
    FAST = "fast"
    SLOW = "slow"
    UNICODE = "ünïcødé"


# collections.namedtuple
Point = namedtuple("Point", ["x", "y"])


# typing.NamedTuple with a default
class Span(NamedTuple):
    start: int
    end: int
    label: str = "span"


@dataclasses.dataclass
class Simple:
    a: int
    b: str = "b"
    c: Optional[float] = None


@dataclasses.dataclass(frozen=True)
class Frozen:
    key: str
    values: tuple = ()


@dataclasses.dataclass
class Nested:
    name: str
    inner: Simple
    tags: list = dataclasses.field(default_factory=list)
    color: Color = Color.RED
    extra: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Empty:
    pass


class ModelV2(pydantic.BaseModel):
    name: str
    count: int = 0
    ratio: float = 0.5
    tags: list[str] = []
    meta: dict[str, Any] = {}
    maybe: Optional[int] = None


class OuterV2(pydantic.BaseModel):
    id: str
    child: ModelV2
    children: list[ModelV2] = []


class ModelV1(pydantic.v1.BaseModel):
    name: str
    count: int = 0
    tags: list = []
    maybe: Optional[int] = None


class CustomError(Exception):
    pass
