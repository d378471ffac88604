"""Key configuration read exactly as the Rust crate reads it (src/crypto/key.rs,
keyring.rs, src/store/keys.rs). Expected messages are Rust's (its #[error] texts)."""

import pytest

from langgraph_codec_keys import (
    KeyConfigError,
    KeyRingCipher,
    key_from_entry,
    keys_from_env,
    strict_from_env,
)

K16 = "0123456789abcdef"


def test_unset_primary_says_what_to_set():
    with pytest.raises(KeyConfigError) as e:
        keys_from_env({})
    assert str(e.value) == (
        "LANGGRAPH_AES_KEY environment variable is not set: set it to the key "
        "(16, 24 or 32 bytes of UTF-8 text)"
    )
    # decrypt-only keys without a primary: the same error, never a silent reader
    with pytest.raises(KeyConfigError, match="LANGGRAPH_AES_KEY environment"):
        keys_from_env({"LANGGRAPH_AES_FALLBACK_KEYS": K16})


def test_primary_is_utf8_bytes_like_python():
    assert keys_from_env({"LANGGRAPH_AES_KEY": "0123456789abcdé"}).primary == (
        "0123456789abcdé".encode()
    )
    with pytest.raises(KeyConfigError) as e:
        keys_from_env({"LANGGRAPH_AES_KEY": "short"})
    assert str(e.value) == (
        "LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long (it is 5 bytes): set it to the key "
        "the Python service uses (16, 24 or 32 bytes of text), or unset it for a store in clear"
    )
    with pytest.raises(KeyConfigError, match="it is 0 bytes"):
        keys_from_env({"LANGGRAPH_AES_KEY": ""})


def test_primary_not_utf8_is_an_error():
    # os.environ holds undecodable bytes as surrogates
    bad = "0123456789abcde\udcff"
    with pytest.raises(KeyConfigError) as e:
        keys_from_env({"LANGGRAPH_AES_KEY": bad})
    assert str(e.value).startswith("LANGGRAPH_AES_KEY is set but is not valid UTF-8 text")
    with pytest.raises(KeyConfigError, match="base64:"):
        keys_from_env({"LANGGRAPH_AES_KEY": K16, "LANGGRAPH_AES_KEY_PREVIOUS": bad})


def test_previous_then_fallback_in_order_with_labels():
    cfg = keys_from_env(
        {
            "LANGGRAPH_AES_KEY": K16,
            "LANGGRAPH_AES_KEY_PREVIOUS": "a" * 16 + ",," + "b" * 24,
            "LANGGRAPH_AES_FALLBACK_KEYS": ",base64:YSxiLGMsZCxlLGYsZyxoLA==,",
        }
    )
    assert cfg.primary == K16.encode()
    assert cfg.previous == (b"a" * 16, b"b" * 24, b"a,b,c,d,e,f,g,h,")
    assert cfg.labels == (
        "LANGGRAPH_AES_KEY",
        "LANGGRAPH_AES_KEY_PREVIOUS #1",
        "LANGGRAPH_AES_KEY_PREVIOUS #2",
        "LANGGRAPH_AES_FALLBACK_KEYS #1",
    )
    assert K16 not in repr(cfg)


def test_entries_are_not_trimmed_and_errors_name_the_entry():
    with pytest.raises(KeyConfigError) as e:
        keys_from_env({"LANGGRAPH_AES_KEY": K16, "LANGGRAPH_AES_KEY_PREVIOUS": f"{K16},,bad"})
    assert str(e.value) == (
        "LANGGRAPH_AES_KEY_PREVIOUS entry 3 must be 16, 24, or 32 bytes long (it is 3 bytes): "
        "give each earlier key as it was set (16, 24 or 32 bytes of text), or as "
        "base64:<standard base64>"
    )
    with pytest.raises(KeyConfigError, match="FALLBACK_KEYS entry 2 must be .* 17 bytes"):
        keys_from_env({"LANGGRAPH_AES_KEY": K16, "LANGGRAPH_AES_FALLBACK_KEYS": f"{K16}, {K16}"})


@pytest.mark.parametrize(
    "entry",
    [
        "base64:!!!",
        "base64:YSxiLGMsZCxlLGYsZyxoLA",  # padding missing
        "base64:YSxiLGMsZCxlLGYsZyxoLB==",  # trailing bits set (not canonical)
        "base64: YSxiLGMsZCxlLGYsZyxoLA==",
        "base64:YSxiLGMsZCxl\nLGYsZyxoLA==",
    ],
)
def test_base64_entries_must_be_canonical_standard_base64(entry):
    with pytest.raises(KeyConfigError) as e:
        key_from_entry(entry, "X entry 1")
    assert str(e.value) == 'X entry 1: the text after "base64:" is not valid standard base64'


def test_at_most_four_decrypt_only_keys():
    four = ",".join([K16] * 4)
    assert len(keys_from_env({"LANGGRAPH_AES_KEY": K16, "LANGGRAPH_AES_KEY_PREVIOUS": four}).previous) == 4
    # named as Rust's previous_from_vars names the source
    for env, source in (
        ({"LANGGRAPH_AES_KEY_PREVIOUS": four + "," + K16}, "LANGGRAPH_AES_KEY_PREVIOUS"),
        ({"LANGGRAPH_AES_FALLBACK_KEYS": four + "," + K16}, "LANGGRAPH_AES_FALLBACK_KEYS"),
        (
            {"LANGGRAPH_AES_KEY_PREVIOUS": ",".join([K16] * 3), "LANGGRAPH_AES_FALLBACK_KEYS": f"{K16},{K16}"},
            "LANGGRAPH_AES_KEY_PREVIOUS and LANGGRAPH_AES_FALLBACK_KEYS",
        ),
    ):
        with pytest.raises(KeyConfigError) as e:
            keys_from_env({"LANGGRAPH_AES_KEY": K16, **env})
        assert str(e.value) == (
            f"{source} holds 5 previous keys; at most 4 are allowed (each one costs every "
            "refused row two authentication passes): re-encrypt old rows and drop the oldest keys"
        )
    # every entry is parsed before the count is checked: a malformed entry is named
    with pytest.raises(KeyConfigError, match="FALLBACK_KEYS entry 3 must be"):
        keys_from_env(
            {
                "LANGGRAPH_AES_KEY": K16,
                "LANGGRAPH_AES_KEY_PREVIOUS": ",".join([K16] * 3),
                "LANGGRAPH_AES_FALLBACK_KEYS": f"{K16},{K16},bad",
            }
        )


@pytest.mark.parametrize(
    "value,on",
    [("1", True), ("true", True), ("yes", True), ("TRUE", True), ("0", False),
     ("false", False), ("no", False), ("", False), (None, False)],
)
def test_strict_switch(value, on):
    env = {} if value is None else {"LANGGRAPH_AES_STRICT": value}
    assert strict_from_env(env) is on


@pytest.mark.parametrize("value", ["on", "2", " true", "enabled"])
def test_strict_switch_rejects_anything_else(value):
    with pytest.raises(KeyConfigError) as e:
        strict_from_env({"LANGGRAPH_AES_STRICT": value})
    assert str(e.value) == (  # Rust's invalid_setting error text
        f'LANGGRAPH_AES_STRICT is "{value}"; it takes 1, true, yes (strict) or 0, false, '
        "no, empty (not strict)"
    )
    with pytest.raises(KeyConfigError, match="LANGGRAPH_AES_STRICT"):
        KeyRingCipher.from_env({"LANGGRAPH_AES_KEY": K16, "LANGGRAPH_AES_STRICT": value})


def test_cipher_from_env(monkeypatch):
    monkeypatch.setenv("LANGGRAPH_AES_KEY", K16)
    monkeypatch.setenv("LANGGRAPH_AES_FALLBACK_KEYS", "b" * 32)
    monkeypatch.setenv("LANGGRAPH_AES_STRICT", "yes")
    c = KeyRingCipher.from_env()
    assert (c.key_count, c.mode, c.strict) == (2, "eax", True)


def test_decrypt_only_keys_without_primary_when_allowed():
    env = {"LANGGRAPH_AES_FALLBACK_KEYS": K16}
    with pytest.raises(KeyConfigError, match="LANGGRAPH_AES_KEY environment"):
        keys_from_env(env)  # as Rust
    cfg = keys_from_env(env, require_primary=False)
    assert (cfg.primary, cfg.previous, cfg.labels) == (None, (K16.encode(),), ("LANGGRAPH_AES_FALLBACK_KEYS #1",))
    assert keys_from_env({}, require_primary=False).previous == ()
