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
from .keys import KeyConfigError


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


class DecryptingMixin:
    """Writes rows in clear (as the inner serializer does) and reads encrypted rows with
    ``self.cipher``: a service with decrypt-only keys and no primary key."""

    cipher: KeyRingCipher

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        tag, payload = data
        if "+" not in tag:
            return super().loads_typed(data)  # type: ignore[misc]
        typ, ciphername = tag.split("+", 1)
        return super().loads_typed((typ, self.cipher.decrypt(ciphername, payload)))  # type: ignore[misc]


@lru_cache(maxsize=None)
def _decrypting_class(cls: type) -> type:
    return type(f"Decrypting{cls.__name__}", (DecryptingMixin, cls), {})


class DecryptingSerializer:
    """:class:`DecryptingMixin` for an inner serializer that is not a
    ``JsonPlusSerializer``."""

    def __init__(self, inner: SerializerProtocol, cipher: KeyRingCipher) -> None:
        self.inner, self.cipher = inner, cipher

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return self.inner.dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        tag, payload = data
        if "+" not in tag:
            return self.inner.loads_typed(data)
        typ, ciphername = tag.split("+", 1)
        return self.inner.loads_typed((typ, self.cipher.decrypt(ciphername, payload)))


def decrypting(serde: SerializerProtocol, cipher: KeyRingCipher) -> SerializerProtocol:
    """A copy of ``serde`` that also reads rows encrypted under ``cipher``'s keys and
    still writes rows in clear. For a ``JsonPlusSerializer`` (or subclass) the copy is
    a subclass of its class, so LangGraph's strict-msgpack rebuild
    (``with_msgpack_allowlist``: a ``copy.copy``) keeps it."""
    if isinstance(serde, JsonPlusSerializer):
        cls = _decrypting_class(type(serde))
        clone = cls.__new__(cls)
        clone.__dict__.update(copy.copy(serde).__dict__)
        clone.cipher = cipher
        return clone
    return DecryptingSerializer(serde, cipher)


def encrypted_serializer(
    serde: SerializerProtocol | None = None,
    *,
    cipher: KeyRingCipher | None = None,
    environ: Mapping[str, str] | None = None,
    strict: bool | None = None,
    mode: str = "eax",
) -> SerializerProtocol:
    """LangGraph's ``EncryptedSerializer`` with a key ring from the environment.

    With ``LANGGRAPH_AES_KEY`` unset but decrypt-only keys set (``LANGGRAPH_AES_FALLBACK_KEYS``
    or ``LANGGRAPH_AES_KEY_PREVIOUS``), the serializer writes rows **in clear** and reads
    rows encrypted under those keys (not an ``EncryptedSerializer`` then: the inner
    serializer made to decrypt, see :func:`decrypting`). That is step 1 of turning
    encryption on without downtime: deploy the key as decrypt-only everywhere, so that
    no process fails on a row a process already switched to ``LANGGRAPH_AES_KEY`` wrote.

    - ``serde``: the inner serializer (default ``JsonPlusSerializer()``, which follows
      ``LANGGRAPH_STRICT_MSGPACK`` as usual).
    - ``cipher``: a ready :class:`KeyRingCipher` (default: from ``environ``, by default
      ``os.environ``: ``LANGGRAPH_AES_KEY``, ``LANGGRAPH_AES_KEY_PREVIOUS``,
      ``LANGGRAPH_AES_FALLBACK_KEYS``, ``LANGGRAPH_AES_STRICT``).
    - ``strict``: overrides ``LANGGRAPH_AES_STRICT``; on, rows in clear are refused.
    - ``mode``: ``"eax"`` (Python's default) or ``"gcm"`` for new rows; both are read.
    """
    if cipher is None:
        cipher = KeyRingCipher.from_env(environ, mode=mode, require_primary=False)
    if strict is not None:
        cipher.strict = strict
    inner: SerializerProtocol = serde if serde is not None else JsonPlusSerializer()
    if not cipher.has_primary:
        if cipher.strict:
            raise KeyConfigError(
                "strict mode needs a primary key (LANGGRAPH_AES_KEY): a service that "
                "refuses rows in clear must write encrypted rows"
            )
        return decrypting(inner, cipher)
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
