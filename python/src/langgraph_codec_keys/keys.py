"""Reading keys from the environment, exactly as the Rust crate (`langgraph-codec`) does.

- ``LANGGRAPH_AES_KEY``: the primary key, the UTF-8 bytes of the value (as Python's
  ``EncryptedSerializer.from_pycryptodome_aes()`` takes it), 16, 24 or 32 bytes.
- ``LANGGRAPH_AES_KEY_PREVIOUS`` then ``LANGGRAPH_AES_FALLBACK_KEYS``: decrypt-only keys,
  comma-separated. Each entry is the key text itself, or ``base64:`` followed by the key
  bytes in standard base64 (padded, canonical) for keys with a comma. Entries are not
  trimmed; empty entries are skipped; a malformed entry is an error naming it, never a
  dropped key. At most :data:`MAX_PREVIOUS_KEYS` decrypt-only keys in all.
- ``LANGGRAPH_AES_STRICT``: ``1``/``true``/``yes`` on, ``0``/``false``/``no``/empty or
  unset off (ASCII case ignored), anything else an error naming the variable.

(Rust: ``src/crypto/key.rs`` ``previous_from_vars`` / ``strict_from_vars``,
``src/crypto/keyring.rs``.)
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

ENV_KEY = "LANGGRAPH_AES_KEY"
ENV_KEY_PREVIOUS = "LANGGRAPH_AES_KEY_PREVIOUS"
ENV_FALLBACK_KEYS = "LANGGRAPH_AES_FALLBACK_KEYS"
ENV_STRICT = "LANGGRAPH_AES_STRICT"
BASE64_PREFIX = "base64:"
#: The most decrypt-only keys a ring holds (as in Rust): refusing a forged row tries
#: every key in both modes.
MAX_PREVIOUS_KEYS = 4

_NOT_UTF8_ADVICE = "; give a key that is not UTF-8 text as a base64:<standard base64> entry"


class KeyConfigError(ValueError):
    """A key variable is missing or malformed; the message names it."""


_KEY_LENGTHS = (16, 24, 32)
# Rust's `u8::is_ascii_whitespace` (what `trim_ascii` strips): not `\v`, which Python's
# `bytes.strip()` would strip too.
_ASCII_WHITESPACE = b" \t\n\f\r"
_HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")


def _decodes_to_key_length(text: bytes) -> bool:
    """Whether ``text`` is canonical standard or URL-safe base64 (padded, no stray
    bits: what Rust's ``STANDARD`` and ``URL_SAFE`` engines accept) of 16, 24 or 32
    bytes."""
    for altchars in (None, b"-_"):
        try:
            raw = base64.b64decode(text, altchars=altchars, validate=True)
        except (binascii.Error, ValueError):
            continue
        # Only text that encodes back to itself: canonical padding, no stray bits, one
        # alphabet (b64decode with altchars also takes "+/").
        if base64.b64encode(raw, altchars=altchars) == text:
            return len(raw) in _KEY_LENGTHS
    return False


def _length_hint(key: bytes, entry: bool) -> str:
    """The likely cause of a key of the wrong length, from its bytes; empty when none
    fits. Word for word Rust's ``length_hint`` (``src/crypto/key.rs``); the shared
    table ``vectors/keys/key_errors.json`` holds both to the same texts. ``entry``: the
    key is an entry of a decrypt-only list, where ``base64:`` entries are allowed."""
    n = len(key)
    if (key.endswith(b"\r\n") and n - 2 in _KEY_LENGTHS) or (
        key.endswith(b"\n") and n - 1 in _KEY_LENGTHS
    ):
        return ": it ends with a trailing newline (from echo or a file?): remove it"
    if not entry and key.startswith(b"base64:"):
        return (
            ": it starts with base64:, which only the previous-keys lists take: "
            "Python reads LANGGRAPH_AES_KEY as text, so set it to the key's text"
        )
    trimmed = key.strip(_ASCII_WHITESPACE)
    if len(trimmed) != n and len(trimmed) in _KEY_LENGTHS:
        if entry and key.startswith(b" "):
            return (
                ": it starts with a space, as after a space after a comma: entries are "
                "not trimmed, so separate them with a bare comma"
            )
        return ": it starts or ends with whitespace: remove it"
    if n >= 32 and n % 2 == 0 and n // 2 in _KEY_LENGTHS and all(b in _HEX_DIGITS for b in key):
        if entry:
            return (
                ": it looks like hex: the key is its text, not hex; decode it, or give "
                "the decoded bytes as base64:<standard base64>"
            )
        return (
            ": it looks like hex: the key is its text (as Python reads it), not hex; "
            "decode it, or use a key of 16, 24 or 32 characters"
        )
    if _decodes_to_key_length(key):
        if entry:
            return ": it looks like base64: give it as base64:<the same text>, or decode it"
        return (
            ": it looks like base64: the key is its text (as Python reads it), not "
            "base64; decode it, or use a key of 16, 24 or 32 characters"
        )
    return ""


def _check_length(key: bytes, source_name: str) -> bytes:
    if len(key) not in _KEY_LENGTHS:
        hint = _length_hint(key, " entry " in source_name)
        # No likely cause: what a key set in the environment is, and where the right
        # one is found (as Rust's ``AesKey::named``).
        if not hint and " entry " in source_name:
            hint = (
                ": give each earlier key as it was set (16, 24 or 32 bytes of text), or as "
                "base64:<standard base64>"
            )
        elif not hint and source_name == "LANGGRAPH_AES_KEY":
            hint = (
                ": set it to the key the Python service uses (16, 24 or 32 bytes of text), "
                "or unset it for a store in clear"
            )
        raise KeyConfigError(
            f"{source_name} must be 16, 24, or 32 bytes long (it is {len(key)} bytes){hint}"
        )
    return key


def _utf8(value: str, var: str, advice: str) -> bytes:
    # os.environ holds bytes that are not UTF-8 as lone surrogates (surrogateescape).
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise KeyConfigError(
            f"{var} is set but is not valid UTF-8 text{advice}"
        ) from None


def key_from_entry(entry: str, source_name: str) -> bytes:
    """One configuration entry: ``base64:<standard base64>`` or else the text's UTF-8 bytes."""
    if entry.startswith(BASE64_PREFIX):
        b64 = entry[len(BASE64_PREFIX) :]
        try:
            raw = base64.b64decode(b64.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raw = None
        # Rust's STANDARD engine wants canonical padding and no stray trailing bits:
        # only text that encodes back to itself is accepted.
        if raw is None or base64.b64encode(raw).decode("ascii") != b64:
            raise KeyConfigError(
                f'{source_name}: the text after "base64:" is not valid standard base64'
            )
        return _check_length(raw, source_name)
    return _check_length(_utf8(entry, source_name, _NOT_UTF8_ADVICE), source_name)


def _too_many(source_name: str, count: int) -> KeyConfigError:
    return KeyConfigError(
        f"{source_name} holds {count} previous keys; at most {MAX_PREVIOUS_KEYS} are "
        "allowed (each one costs every refused row two authentication passes): "
        "re-encrypt old rows and drop the oldest keys"
    )


@dataclass(frozen=True)
class KeyConfig:
    """The keys of a process: one primary key, decrypt-only keys with labels."""

    primary: bytes | None
    previous: tuple[bytes, ...] = ()
    labels: tuple[str, ...] = field(default=(ENV_KEY,))

    def __repr__(self) -> str:  # never print key bytes
        keys = (self.primary, *self.previous) if self.primary is not None else self.previous
        sizes = ", ".join(str(len(k) * 8) for k in keys)
        return f"KeyConfig(bits=[{sizes}], labels={list(self.labels)!r})"


def _split_entries(env: Mapping[str, str], var: str) -> tuple[list[bytes], list[str]]:
    """Every entry of ``var`` (all parsed before any count is checked, as Rust's
    ``entries_from_var``)."""
    value = env.get(var)
    if value is None:
        return [], []
    _utf8(value, var, _NOT_UTF8_ADVICE)
    keys: list[bytes] = []
    labels: list[str] = []
    for i, entry in enumerate(value.split(",")):
        if entry == "":
            continue
        keys.append(key_from_entry(entry, f"{var} entry {i + 1}"))
        labels.append(f"{var} #{len(keys)}")
    return keys, labels


def missing_key_error() -> KeyConfigError:
    return KeyConfigError(
        f"{ENV_KEY} environment variable is not set: set it to the key "
        "(16, 24 or 32 bytes of UTF-8 text)"
    )


def keys_from_env(
    environ: Mapping[str, str] | None = None, *, require_primary: bool = True
) -> KeyConfig:
    """The primary and decrypt-only keys from ``environ`` (default: ``os.environ``).

    Raises :class:`KeyConfigError` when ``LANGGRAPH_AES_KEY`` is unset (as Rust does),
    or when any entry is malformed (the message names the variable and entry).

    ``require_primary=False`` (an extension of this package, not in Rust's parsing):
    with ``LANGGRAPH_AES_KEY`` unset, ``primary`` is ``None`` and only decrypt-only keys
    are returned (possibly none) -- the first step of turning encryption on without
    downtime (see :func:`langgraph_codec_keys.encrypted_serializer`).
    """
    env = os.environ if environ is None else environ
    text = env.get(ENV_KEY)
    if text is None:
        if require_primary:
            raise missing_key_error()
        primary = None
    else:
        primary = _check_length(
            _utf8(text, ENV_KEY, " (Python reads the key as UTF-8 text, as the key itself)"),
            ENV_KEY,
        )
    previous, prev_labels = _split_entries(env, ENV_KEY_PREVIOUS)
    fallback, fb_labels = _split_entries(env, ENV_FALLBACK_KEYS)
    if len(previous) + len(fallback) > MAX_PREVIOUS_KEYS:
        # named as Rust's previous_from_vars names it
        if not previous:
            source = ENV_FALLBACK_KEYS
        elif not fallback:
            source = ENV_KEY_PREVIOUS
        else:
            source = f"{ENV_KEY_PREVIOUS} and {ENV_FALLBACK_KEYS}"
        raise _too_many(source, len(previous) + len(fallback))
    return KeyConfig(
        primary=primary,
        previous=tuple(previous + fallback),
        labels=(*([ENV_KEY] if primary is not None else []), *prev_labels, *fb_labels),
    )


#: The 64 characters of a generated key (base64url's alphabet), as Rust's
#: ``crypto::KEY_ALPHABET``: one UTF-8 byte each, nothing to quote in a shell or an env
#: file, no comma (the list separator), no ``:`` (never a ``base64:`` entry).
KEY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def generate_key(length: int = 32) -> str:
    """A new random key for ``LANGGRAPH_AES_KEY``: ``length`` characters (16, 24 or 32)
    drawn uniformly from :data:`KEY_ALPHABET` with :mod:`secrets`, 6 bits of entropy
    each (192 bits for 32 characters). Python takes the key as the text's UTF-8 bytes,
    one per character: a 32-character key is an AES-256 key. The same rules as
    ``lgcodec key generate`` (Rust's ``crypto::generate_key``)."""
    if isinstance(length, bool) or length not in _KEY_LENGTHS:
        raise KeyConfigError(
            f"a generated key must be 16, 24, or 32 bytes long (it is {length} bytes)"
        )
    return "".join(secrets.choice(KEY_ALPHABET) for _ in range(length))


def strict_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """``LANGGRAPH_AES_STRICT`` as a switch (see the module docs)."""
    env = os.environ if environ is None else environ
    value = env.get(ENV_STRICT)
    if value is None:
        return False
    low = value.lower() if value.isascii() else value
    if low in ("1", "true", "yes"):
        return True
    if low in ("0", "false", "no", ""):
        return False
    shown = value[:40].replace("\\", "\\\\").replace('"', '\\"')
    raise KeyConfigError(
        f'{ENV_STRICT} is "{shown}"; it takes 1, true, yes (strict) or 0, false, no, '
        "empty (not strict)"
    )
