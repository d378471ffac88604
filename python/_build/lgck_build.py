"""A minimal in-tree PEP 517 build backend (pure standard library).

Why: `pip install ./python` must work offline. With setuptools as the backend, pip's
build isolation downloads setuptools (and, for setuptools < 70.1, `wheel`) into a
fresh environment, which fails without an index. This backend needs nothing but the
standard library (plus `tomli` on Python 3.10, which has no `tomllib`), so the build
environment is empty and nothing is downloaded.

It reads `[project]` from pyproject.toml (name, version, description, readme,
requires-python, license, dependencies, optional-dependencies) and packs `src/*` into
a pure-Python wheel.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent


def _project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _names() -> tuple[str, str, str]:
    p = _project()
    dist = re.sub(r"[-_.]+", "_", p["name"]).lower()
    return p["name"], dist, p["version"]


def _metadata() -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
    ]
    if "description" in p:
        lines.append(f"Summary: {p['description']}")
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    lic = p.get("license", {})
    if isinstance(lic, dict) and "text" in lic:
        lines.append(f"License: {lic['text']}")
    for dep in p.get("dependencies", []):
        lines.append(f"Requires-Dist: {dep}")
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for dep in deps:
            marker = f'extra == "{extra}"'
            if ";" in dep:
                req, m = dep.split(";", 1)
                lines.append(f"Requires-Dist: {req.strip()} ; ({m.strip()}) and {marker}")
            else:
                lines.append(f"Requires-Dist: {dep} ; {marker}")
    body = ""
    readme = p.get("readme")
    if isinstance(readme, str) and (ROOT / readme).is_file():
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n" + body


def _package_files():
    src = ROOT / "src"
    for path in sorted(src.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            yield path.relative_to(src).as_posix(), path.read_bytes()


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _dist_info_files(dist: str, version: str) -> list[tuple[str, bytes]]:
    di = f"{dist}-{version}.dist-info"
    wheel = "Wheel-Version: 1.0\nGenerator: lgck_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    return [
        (f"{di}/METADATA", _metadata().encode()),
        (f"{di}/WHEEL", wheel.encode()),
        (f"{di}/top_level.txt", b"langgraph_codec_keys\n"),
    ]


def _write_wheel(wheel_directory: str, files: list[tuple[str, bytes]]) -> str:
    _, dist, version = _names()
    name = f"{dist}-{version}-py3-none-any.whl"
    files = files + _dist_info_files(dist, version)
    record_name = f"{dist}-{version}.dist-info/RECORD"
    record = "\n".join([_record_line(n, d) for n, d in files] + [f"{record_name},,"]) + "\n"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files + [(record_name, record.encode())]:
            info = zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, d, zipfile.ZIP_DEFLATED)
    return name


# -- PEP 517 ---------------------------------------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _, dist, version = _names()
    for n, d in _dist_info_files(dist, version):
        path = Path(metadata_directory) / n
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(d)
    return f"{dist}-{version}.dist-info"


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, list(_package_files()))


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth file pointing at src/: edits show without reinstalling.
    _, dist, _ = _names()
    return _write_wheel(wheel_directory, [(f"_{dist}.pth", (str(ROOT / "src") + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    _, dist, version = _names()
    base = f"{dist}-{version}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in ["pyproject.toml", "README.md", "_build/lgck_build.py"]:
            if (ROOT / rel).is_file():
                tar.add(ROOT / rel, arcname=f"{base}/{rel}")
        for rel, _ in _package_files():
            tar.add(ROOT / "src" / rel, arcname=f"{base}/src/{rel}")
        for path in sorted((ROOT / "tests").rglob("*.py")):
            tar.add(path, arcname=f"{base}/{path.relative_to(ROOT).as_posix()}")
        pkg_info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        pkg_info.size = len(data)
        tar.addfile(pkg_info, io.BytesIO(data))
    return name
