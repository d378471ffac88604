"""`KeyRingCipher`: a `CipherProtocol` for LangGraph's `EncryptedSerializer` holding a
primary key (encrypts) and decrypt-only keys, reading EAX and GCM rows alike.

Rows are ``nonce(16) | tag(16) | ciphertext``, as Python's
``EncryptedSerializer.from_pycryptodome_aes()`` writes them. The mode of a row is not
stored: it is found by trying, each key in the preferred mode then the other, primary
key first (as the Rust crate's ``aes::open_any``).
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterable, Mapping, Sequence

from Crypto.Cipher import AES

from .keys import (
    ENV_KEY,
    MAX_PREVIOUS_KEYS,
    KeyConfig,
    KeyConfigError,
    keys_from_env,
    missing_key_error,
    strict_from_env,
)

NONCE_LEN = 16
TAG_LEN = 16
HEADER_LEN = NONCE_LEN + TAG_LEN
#: The cipher name Python writes (``msgpack+aes``).
AES_NAME = "aes"
#: The cipher name a ``msgpack+zlib+aes`` row reaches the cipher with (Python's
#: ``EncryptedSerializer`` splits the tag at its first ``+``).
ZLIB_AES_NAME = "zlib+aes"
#: A ``msgpack+zlib`` row (compressed, not encrypted) reaches the cipher as ``zlib``.
ZLIB_NAME = "zlib"
#: The marker in front of every compressed payload (upstream LangGraph's
#: ``CompressedSerializer``; Rust ``src/crypto/compress.rs``).
ZLIB_MARKER = b"LGZ\x01"
#: The default limit on one row's decompressed size: 256 MiB (as Rust).
DEFAULT_MAX_DECOMPRESSED = 256 << 20

_MODES = {"eax": AES.MODE_EAX, "gcm": AES.MODE_GCM}

# The plaintext this thread's cipher opened last. `EncryptedSerializer.loads_typed`
# passes it straight on to the inner serializer, which (in fail-closed mode) reads only
# the very object the cipher produced: a row in clear never went through the cipher.
_opened = threading.local()


class CipherError(ValueError):
    """A row the cipher cannot open (wrong key, altered bytes, unknown cipher name...)."""


class PlaintextRefused(CipherError):
    """Fail-closed mode: the row is not encrypted."""

    def __init__(self, type_tag: str) -> None:
        super().__init__(
            f"refusing unencrypted row with type tag {type_tag!r}: strict mode "
            "(LANGGRAPH_AES_STRICT) requires every row to be encrypted"
        )
        self.type_tag = type_tag


def take_opened(data: object) -> bool:
    """Whether ``data`` is the plaintext this thread's cipher just opened (and forget it)."""
    last = getattr(_opened, "value", None)
    _opened.value = None
    return last is not None and last is data


def _decompress(payload: bytes, limit: int) -> bytes:
    if not payload.startswith(ZLIB_MARKER):
        raise CipherError('invalid compressed payload: missing the b"LGZ\\x01" marker')
    d = zlib.decompressobj()
    try:
        out = d.decompress(payload[len(ZLIB_MARKER) :], limit + 1)
    except zlib.error as e:
        raise CipherError(f"invalid compressed payload: invalid zlib stream: {e}") from None
    if len(out) > limit:
        raise CipherError(f"decompressed data exceeds the limit of {limit} bytes")
    if not d.eof:
        raise CipherError("invalid compressed payload: invalid zlib stream: truncated")
    if d.unused_data or d.unconsumed_tail:
        raise CipherError("invalid compressed payload: bytes after the zlib stream")
    return out


class KeyRingCipher:
    """A ``CipherProtocol``: ``encrypt(plaintext) -> ("aes", nonce|tag|ciphertext)`` under
    the primary key; ``decrypt(name, blob)`` tries every key in both modes.

    ``decrypt`` accepts the cipher names ``aes`` and ``zlib+aes`` (a ``msgpack+zlib+aes``
    row, as the Rust crate's ``CompressedSerializer`` under encryption writes it: the
    plaintext is ``b"LGZ\\x01"`` + a zlib stream, decompressed here with a size limit),
    and, unless ``strict``, ``zlib`` (compressed, not encrypted).

    ``strict`` (fail-closed) refuses ``zlib`` rows; rows in clear never reach a cipher,
    so refusing those is the inner serializer's job: build the serializer with
    :func:`langgraph_codec_keys.encrypted_serializer`, which pairs the two.
    """

    def __init__(
        self,
        primary: bytes | None,
        previous: Iterable[bytes] = (),
        *,
        mode: str = "eax",
        strict: bool = False,
        labels: Sequence[str] | None = None,
        max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
    ) -> None:
        prev = [bytes(k) for k in previous]
        keys = ([bytes(primary)] if primary is not None else []) + prev
        if not keys:
            raise KeyConfigError("a KeyRingCipher needs a primary key or decrypt-only keys")
        for i, k in enumerate(keys):
            if len(k) not in (16, 24, 32):
                what = "primary key" if i == 0 and primary is not None else "decrypt-only key"
                raise KeyConfigError(
                    f"{what} must be 16, 24, or 32 bytes long (it is {len(k)} bytes)"
                )
        if len(prev) > MAX_PREVIOUS_KEYS:
            raise KeyConfigError(
                f"KeyRing holds {len(prev)} previous keys; at most "
                f"{MAX_PREVIOUS_KEYS} are allowed"
            )
        #: False: decrypt-only (no LANGGRAPH_AES_KEY); ``encrypt`` refuses.
        self.has_primary = primary is not None
        if mode not in _MODES:
            raise KeyConfigError(f"mode must be 'eax' or 'gcm', not {mode!r}")
        self._keys = tuple(keys)
        self._mode = mode
        self._order = (_MODES[mode], _MODES["gcm" if mode == "eax" else "eax"])
        self.strict = bool(strict)
        self.max_decompressed = max_decompressed
        self.labels = tuple(labels) if labels is not None else tuple(
            ([ENV_KEY] if primary is not None else [])
            + [f"previous #{i}" for i in range(1, len(prev) + 1)]
        )

    @classmethod
    def from_config(cls, config: KeyConfig, **kwargs: object) -> KeyRingCipher:
        return cls(config.primary, config.previous, labels=config.labels, **kwargs)  # type: ignore[arg-type]

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        mode: str = "eax",
        require_primary: bool = True,
    ) -> KeyRingCipher:
        """Keys and the strict switch from the environment (see :mod:`.keys`)."""
        config = keys_from_env(environ, require_primary=require_primary)
        if config.primary is None and not config.previous:
            raise missing_key_error()
        strict = strict_from_env(environ)
        if strict and config.primary is None:
            raise KeyConfigError(
                f"LANGGRAPH_AES_STRICT is on but {ENV_KEY} is not set: a service "
                "that refuses rows in clear must write encrypted rows"
            )
        return cls.from_config(config, mode=mode, strict=strict)

    def __repr__(self) -> str:
        return (
            f"KeyRingCipher(keys={len(self._keys)}, mode={self._mode!r}, "
            f"strict={self.strict})"
        )

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def key_count(self) -> int:
        return len(self._keys)

    # -- CipherProtocol --------------------------------------------------------------

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        if not self.has_primary:
            raise CipherError(
                f"no primary key ({ENV_KEY} is not set): this cipher only decrypts"
            )
        cipher = AES.new(self._keys[0], self._order[0])
        ciphertext, tag = cipher.encrypt_and_digest(plaintext)
        return AES_NAME, cipher.nonce + tag + ciphertext

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername == AES_NAME:
            plaintext, _ = self.open(ciphertext)
        elif ciphername == ZLIB_AES_NAME:
            opened, _ = self.open(ciphertext)
            plaintext = _decompress(opened, self.max_decompressed)
        elif ciphername == ZLIB_NAME:
            if self.strict:
                raise PlaintextRefused(f"<type>+{ZLIB_NAME}")
            plaintext = _decompress(bytes(ciphertext), self.max_decompressed)
        else:
            raise CipherError(
                f"unknown cipher {ciphername!r}: no configured cipher or wrapper "
                "handles this type-tag suffix"
            )
        _opened.value = plaintext
        return plaintext

    # -- for tools ------------------------------------------------------------------

    def open(self, blob: bytes) -> tuple[bytes, int]:
        """The plaintext of an ``aes`` blob and the index of the key that opened it:
        its position in the ring, primary key first when there is one (0: the primary
        key, n: the n-th decrypt-only key); ``labels[index]`` names it."""
        blob = bytes(blob)
        if len(blob) < HEADER_LEN:
            raise CipherError(
                f"ciphertext is {len(blob)} bytes, shorter than the 32-byte nonce and "
                "tag header"
            )
        nonce, tag, body = blob[:NONCE_LEN], blob[NONCE_LEN:HEADER_LEN], blob[HEADER_LEN:]
        for index, key in enumerate(self._keys):
            for mode in self._order:
                try:
                    return AES.new(key, mode, nonce=nonce).decrypt_and_verify(body, tag), index
                except ValueError:
                    continue
        raise CipherError(
            "decryption failed: wrong key, tampered ciphertext or wrong associated data "
            f"(tried {len(self._keys)} key(s), EAX and GCM)"
        )

    def key_index(self, blob: bytes) -> int:
        """Which key opens ``blob`` (see :meth:`open`)."""
        return self.open(blob)[1]
