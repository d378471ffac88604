import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
# Run from the checkout without installing (an installed copy works the same).
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

OLD = "old-key-16-bytes"
NEW = "new-key-32-bytes-long-0123456789"
OTHER = "other-key-24-bytes-long!"

KEY_VARS = (
    "LANGGRAPH_AES_KEY",
    "LANGGRAPH_AES_KEY_PREVIOUS",
    "LANGGRAPH_AES_FALLBACK_KEYS",
    "LANGGRAPH_AES_STRICT",
)


@pytest.fixture(autouse=True)
def _clean_key_env(monkeypatch):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


def _cargo_build(args: list[str]) -> None:
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not on PATH: Rust-written rows cannot be made")
    subprocess.run([cargo, "build", "--quiet", *args], cwd=REPO, check=True)


@pytest.fixture(scope="session")
def rust_bin():
    """Path of a Rust binary or example, built once (LGCODEC_TARGET_DIR or REPO/target)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "debug"
    built: set[str] = set()

    def get(kind: str, name: str) -> Path:
        # One feature set for every build, CI's (`cargo test --all-features`), so that
        # cargo rebuilds nothing between a binary and an example, or after CI's tests.
        if (kind, name) not in built:
            _cargo_build([f"--{kind}", name, "--all-features"])
            built.add((kind, name))
        return target / ("examples" if kind == "example" else "") / name

    return get
