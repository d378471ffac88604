"""The serializer: LangGraph's own ``EncryptedSerializer`` around a :class:`KeyRingCipher`,
with a fail-closed inner serializer when strict mode is on.

Why the inner serializer: ``EncryptedSerializer.loads_typed`` hands a row whose tag has
no ``+`` (a row in clear) straight to the inner serializer; the cipher never sees it.
With ``LANGGRAPH_STRICT_MSGPACK`` on, LangGraph rebuilds a *plain*
``EncryptedSerializer(serde.cipher, serde.serde.with_msgpack_allowlist(...))``, so a
subclass of ``EncryptedSerializer`` would be dropped. The inner serializer is a
``JsonPlusSerializer`` subclass, and ``with_msgpack_allowlist`` returns a
``copy.copy`` of it (same class): the refusal survives the rebuild, as the cipher does.

The inner serializer reads a row only when its bytes are the very object the cipher
just opened on this thread (``EncryptedSerializer`` passes the cipher's output straight
on); any other row is in clear and is refused with :class:`PlaintextRefused`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from .cipher import KeyRingCipher, PlaintextRefused, take_opened


class FailClosedMixin:
    """Refuses every row the cipher did not just open (see the module docs)."""

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        typ, payload = data
        if not take_opened(payload):
            raise PlaintextRefused(typ)
        return super().loads_typed(data)  # type: ignore[misc]


class FailClosedJsonPlusSerializer(FailClosedMixin, JsonPlusSerializer):
    """``JsonPlusSerializer`` that reads only rows its paired cipher opened."""


@lru_cache(maxsize=None)
def _fail_closed_class(cls: type) -> type:
    if issubclass(cls, FailClosedMixin):
        return cls
    if cls is JsonPlusSerializer:
        return FailClosedJsonPlusSerializer
    return type(f"FailClosed{cls.__name__}", (FailClosedMixin, cls), {})


class FailClosedSerializer:
    """Fail-closed wrapper for an inner serializer that is not a ``JsonPlusSerializer``
    (LangGraph's strict-msgpack allowlist does not apply to those anyway)."""

    def __init__(self, inner: SerializerProtocol) -> None:
        self.inner = inner

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return self.inner.dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        if not take_opened(data[1]):
            raise PlaintextRefused(data[0])
        return self.inner.loads_typed(data)


def fail_closed(serde: SerializerProtocol) -> SerializerProtocol:
    """A copy of ``serde`` that refuses rows in clear (kept through
    ``with_msgpack_allowlist`` for ``JsonPlusSerializer`` and its subclasses)."""
    if isinstance(serde, (FailClosedMixin, FailClosedSerializer)):
        return serde
    if isinstance(serde, JsonPlusSerializer):
        cls = _fail_closed_class(type(serde))
        clone = cls.__new__(cls)
        clone.__dict__.update(copy.copy(serde).__dict__)
        return clone
    return FailClosedSerializer(serde)


def encrypted_serializer(
    serde: SerializerProtocol | None = None,
    *,
    cipher: KeyRingCipher | None = None,
    environ: Mapping[str, str] | None = None,
    strict: bool | None = None,
    mode: str = "eax",
) -> EncryptedSerializer:
    """LangGraph's ``EncryptedSerializer`` with a key ring from the environment.

    - ``serde``: the inner serializer (default ``JsonPlusSerializer()``, which follows
      ``LANGGRAPH_STRICT_MSGPACK`` as usual).
    - ``cipher``: a ready :class:`KeyRingCipher` (default: from ``environ``, by default
      ``os.environ``: ``LANGGRAPH_AES_KEY``, ``LANGGRAPH_AES_KEY_PREVIOUS``,
      ``LANGGRAPH_AES_FALLBACK_KEYS``, ``LANGGRAPH_AES_STRICT``).
    - ``strict``: overrides ``LANGGRAPH_AES_STRICT``; on, rows in clear are refused.
    - ``mode``: ``"eax"`` (Python's default) or ``"gcm"`` for new rows; both are read.
    """
    if cipher is None:
        cipher = KeyRingCipher.from_env(environ, mode=mode)
    if strict is not None:
        cipher.strict = strict
    inner: SerializerProtocol = serde if serde is not None else JsonPlusSerializer()
    if cipher.strict:
        inner = fail_closed(inner)
    return EncryptedSerializer(cipher, inner)


def is_fail_closed(serde: object) -> bool:
    """Whether ``serde`` (a saver's ``.serde``) refuses rows in clear: an
    ``EncryptedSerializer`` around a strict :class:`KeyRingCipher` and a fail-closed
    inner serializer. A service can assert this at start-up."""
    return (
        isinstance(serde, EncryptedSerializer)
        and isinstance(serde.cipher, KeyRingCipher)
        and serde.cipher.strict
        and isinstance(serde.serde, (FailClosedMixin, FailClosedSerializer))
    )
