"""The cipher and serializer against Python's own EncryptedSerializer (4.3.2)."""

import zlib

import pytest
from Crypto.Cipher import AES
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from conftest import NEW, OLD, OTHER
from langgraph_codec_keys import (
    CipherError,
    KeyRingCipher,
    PlaintextRefused,
    encrypted_serializer,
    is_fail_closed,
)

VALUE = {"messages": ["hi", "there"], "step": 3, "blob": b"\x00\xff"}


def python(key: str, mode=None) -> EncryptedSerializer:
    return EncryptedSerializer.from_pycryptodome_aes(key=key.encode(), mode=mode)


def ring(primary=NEW, *previous, **kw) -> EncryptedSerializer:
    return encrypted_serializer(
        cipher=KeyRingCipher(primary.encode(), [p.encode() for p in previous], **kw)
    )


def test_writes_eax_rows_python_reads():
    tag, data = ring().dumps_typed(VALUE)
    assert tag == "msgpack+aes"
    assert python(NEW).loads_typed((tag, data)) == VALUE
    # and GCM when asked, which Python reads in GCM mode only
    tag, data = ring(mode="gcm").dumps_typed(VALUE)
    assert python(NEW, AES.MODE_GCM).loads_typed((tag, data)) == VALUE
    with pytest.raises(ValueError, match="MAC check failed"):
        python(NEW).loads_typed((tag, data))


@pytest.mark.parametrize("mode", [AES.MODE_EAX, AES.MODE_GCM])
def test_reads_python_rows_in_both_modes_under_any_key(mode):
    serde = ring(NEW, OTHER, OLD)
    for key in (NEW, OTHER, OLD):
        row = python(key, mode).dumps_typed(VALUE)
        assert serde.loads_typed(row) == VALUE
    c = serde.cipher
    assert c.key_index(python(OLD, mode).dumps_typed(VALUE)[1]) == 2
    assert c.key_index(python(NEW, mode).dumps_typed(VALUE)[1]) == 0


def test_rotation_old_rows_after_primary_switch():
    before = ring(OLD).dumps_typed(VALUE)
    # step 1: new key deployed as a fallback: writers still write under OLD
    step1 = ring(OLD, NEW)
    assert step1.loads_typed(before) == VALUE
    mid = step1.dumps_typed(VALUE)
    # step 2: primary switched, old key kept decrypt-only
    step2 = ring(NEW, OLD)
    assert step2.loads_typed(before) == VALUE and step2.loads_typed(mid) == VALUE
    after = step2.dumps_typed(VALUE)
    assert step2.cipher.key_index(after[1]) == 0
    # the step-1 fleet reads the step-2 rows (the reason for deploying as fallback first)
    assert step1.loads_typed(after) == VALUE
    # old key dropped: old rows are unreadable, new ones fine
    dropped = ring(NEW)
    assert dropped.loads_typed(after) == VALUE
    with pytest.raises(CipherError, match=r"decryption failed: .*tried 1 key\(s\), EAX and GCM"):
        dropped.loads_typed(before)


def test_altered_and_short_rows_are_errors():
    tag, data = ring().dumps_typed(VALUE)
    bad = data[:40] + bytes([data[40] ^ 1]) + data[41:]
    with pytest.raises(CipherError, match="tried 1 key"):
        ring().loads_typed((tag, bad))
    with pytest.raises(CipherError, match="^ciphertext is 31 bytes, shorter than the 32-byte"):
        ring().loads_typed((tag, data[:31]))
    with pytest.raises(CipherError, match="^unknown cipher 'rot13'"):
        ring().loads_typed(("msgpack+rot13", data))


def _zlib_aes_row(key: str, plain_tag_data, mode=AES.MODE_EAX):
    """msgpack+zlib+aes as upstream's CompressedSerializer under encryption lays it out
    (b"LGZ\\x01" + zlib stream, then encrypted). Rust-written rows: test_rust_interop."""
    typ, data = plain_tag_data
    c = AES.new(key.encode(), mode)
    ct, tag = c.encrypt_and_digest(b"LGZ\x01" + zlib.compress(data, 6))
    return f"{typ}+zlib+aes", c.nonce + tag + ct


def test_zlib_aes_rows():
    row = _zlib_aes_row(OLD, JsonPlusSerializer().dumps_typed(VALUE), AES.MODE_GCM)
    assert ring(NEW, OLD).loads_typed(row) == VALUE
    # Python 4.3.2's own cipher cannot
    with pytest.raises(AssertionError, match="Unsupported cipher: zlib\\+aes"):
        python(OLD).loads_typed(row)
    # a zip bomb stops at the limit
    big = _zlib_aes_row(NEW, ("bytes", b"\0" * 5000))
    with pytest.raises(CipherError, match="exceeds the limit of 4096 bytes"):
        ring(max_decompressed=4096).loads_typed(big)
    assert ring().loads_typed(big) == b"\0" * 5000


def test_zlib_payload_errors():
    typ, data = JsonPlusSerializer().dumps_typed(VALUE)
    no_marker = ("msgpack+aes", ring().cipher.encrypt(zlib.compress(data))[1])
    with pytest.raises(CipherError, match="missing the"):
        ring().loads_typed(("msgpack+zlib+aes", no_marker[1]))
    trailing = ring().cipher.encrypt(b"LGZ\x01" + zlib.compress(data) + b"x")[1]
    with pytest.raises(CipherError, match="bytes after the zlib stream"):
        ring().loads_typed(("msgpack+zlib+aes", trailing))
    cut = ring().cipher.encrypt(b"LGZ\x01" + zlib.compress(data)[:-3])[1]
    with pytest.raises(CipherError, match="invalid compressed payload"):
        ring().loads_typed(("msgpack+zlib+aes", cut))


def test_clear_rows_read_unless_strict():
    clear = JsonPlusSerializer().dumps_typed(VALUE)
    compressed = ("msgpack+zlib", b"LGZ\x01" + zlib.compress(clear[1]))
    lenient = ring()
    assert lenient.loads_typed(clear) == VALUE
    assert lenient.loads_typed(compressed) == VALUE
    strict = ring(strict=True)
    assert is_fail_closed(strict) and not is_fail_closed(lenient)
    for row in (clear, compressed, ("null", b""), ("json", b"{}"), ("bytes", b"x")):
        with pytest.raises(PlaintextRefused, match="refusing unencrypted row"):
            strict.loads_typed(row)
    # encrypted rows still read, and a refusal does not poison the next read
    assert strict.loads_typed(ring().dumps_typed(VALUE)) == VALUE
    assert strict.loads_typed(ring().dumps_typed(None)) is None
    with pytest.raises(PlaintextRefused):
        strict.loads_typed(clear)


def test_strict_from_env_and_custom_inner(monkeypatch):
    monkeypatch.setenv("LANGGRAPH_AES_KEY", NEW)
    monkeypatch.setenv("LANGGRAPH_AES_STRICT", "1")
    inner = JsonPlusSerializer(pickle_fallback=True)
    serde = encrypted_serializer(inner)
    assert is_fail_closed(serde) and serde.serde.pickle_fallback
    assert type(inner) is JsonPlusSerializer  # the caller's object is not changed
    with pytest.raises(PlaintextRefused):
        serde.loads_typed(inner.dumps_typed(1))
    # with_msgpack_allowlist keeps the refusal (it copies the inner serializer)
    again = serde.serde.with_msgpack_allowlist([("x", "Y")])
    with pytest.raises(PlaintextRefused):
        EncryptedSerializer(serde.cipher, again).loads_typed(inner.dumps_typed(1))


def test_plain_python_serializer_reads_clear_rows_silently():
    """Why fail-closed mode exists: Python 4.3.2 reads rows in clear without a word."""
    assert python(NEW).loads_typed(JsonPlusSerializer().dumps_typed(VALUE)) == VALUE


def test_decrypt_only_keys_write_in_clear_and_read_encrypted(monkeypatch):
    """Step 1 of turning encryption on: the key deployed as decrypt-only everywhere."""
    monkeypatch.setenv("LANGGRAPH_AES_FALLBACK_KEYS", NEW)
    serde = encrypted_serializer()
    tag, data = serde.dumps_typed(VALUE)
    assert tag == "msgpack" and JsonPlusSerializer().loads_typed((tag, data)) == VALUE
    for mode in (AES.MODE_EAX, AES.MODE_GCM):
        assert serde.loads_typed(python(NEW, mode).dumps_typed(VALUE)) == VALUE
    assert serde.loads_typed((tag, data)) == VALUE
    # LangGraph's strict-msgpack rebuild copies the inner serializer: still decrypts
    locked = encrypted_serializer(JsonPlusSerializer(allowed_msgpack_modules=None))
    again = locked.with_msgpack_allowlist([("x", "Y")])
    assert again is not locked and again.cipher is locked.cipher
    assert again.loads_typed(python(NEW).dumps_typed(VALUE)) == VALUE
    # Python's default serializer (the fleet before step 1) cannot read the rows
    with pytest.raises(NotImplementedError, match="msgpack\\+aes"):
        JsonPlusSerializer().loads_typed(python(NEW).dumps_typed(VALUE))
    # strict mode needs a primary key; no key at all is the usual error
    monkeypatch.setenv("LANGGRAPH_AES_STRICT", "1")
    with pytest.raises(ValueError, match="LANGGRAPH_AES_STRICT is on but LANGGRAPH_AES_KEY is not set"):
        encrypted_serializer()
    monkeypatch.delenv("LANGGRAPH_AES_FALLBACK_KEYS")
    monkeypatch.delenv("LANGGRAPH_AES_STRICT")
    with pytest.raises(ValueError, match="^LANGGRAPH_AES_KEY environment variable is not set"):
        encrypted_serializer()
    with pytest.raises(CipherError, match="only decrypts"):
        KeyRingCipher(None, [NEW.encode()]).encrypt(b"x")
