"""The companion's key errors are Rust's, word for word: both run the one shared table
``vectors/keys/key_errors.json`` (the Rust side: ``tests/crypto/key_error_table.rs``)."""

import json

import pytest
from conftest import REPO

from langgraph_codec_keys import KeyConfigError, encrypted_serializer, keys_from_env

TABLE = REPO / "vectors" / "keys" / "key_errors.json"


def _cases():
    if not TABLE.exists():  # an sdist of the package alone
        return []
    return json.loads(TABLE.read_text())["cases"]


CASES = _cases()


@pytest.mark.skipif(not CASES, reason="vectors/keys/key_errors.json is not beside the package")
def test_the_table_covers_every_hint():
    hinted = [c for c in CASES if c["error"] and "): it " in c["error"]]
    assert len(CASES) >= 40 and len(hinted) >= 15


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_each_case_gives_rusts_text(case):
    if case["error"] is None:
        config = keys_from_env(case["env"])
        assert 1 + len(config.previous) == case["keys"]
        return
    with pytest.raises(KeyConfigError) as e:
        keys_from_env(case["env"])
    assert str(e.value) == case["error"]


# encrypted_serializer() with decrypt-only keys and no primary key is the package's
# decrypt-only mode on purpose (README: "One difference from Rust"), not an error.
SERIALIZER_ERRORS = [c for c in CASES if c["error"] and not (c["kind"] == "missing_key" and c["env"])]


@pytest.mark.parametrize("case", SERIALIZER_ERRORS, ids=[c["name"] for c in SERIALIZER_ERRORS])
def test_the_serializer_from_the_environment_says_the_same(case, monkeypatch):
    for var, value in case["env"].items():
        monkeypatch.setenv(var, value)
    with pytest.raises(KeyConfigError) as e:
        encrypted_serializer()
    assert str(e.value) == case["error"]
