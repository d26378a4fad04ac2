"""A built model folder and its marker: the float32 copy normtest builds from an installed
model's files (GGUF or wheel), whose marker file, written last, records every file's size and
SHA-256 so that a folder is used only when it is whole and unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from normtest.base.fingerprint import sha256_now

#: The marker file of a finished float32 copy (written last, inside the temporary folder).
BUILD_MARKER = "normtest-build.json"


def folder_digests(folder: Path) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of every file of ``folder`` except the marker, by name (hashed now)."""
    return {p.name: {"size": p.stat().st_size, "sha256": sha256_now(p)}
            for p in sorted(folder.iterdir()) if p.is_file() and p.name != BUILD_MARKER}


def load_marker(folder: Path) -> dict[str, Any] | None:
    """The marker of ``folder`` as written (None: missing, unreadable or not an object)."""
    try:
        marker = json.loads((folder / BUILD_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def check_files(folder: Path, files: Any) -> str | None:
    """None when ``folder`` holds exactly the files ``files`` records (besides the marker), each
    a plain file with its recorded size and SHA-256 (hashed in full now, never cached); else
    what is wrong, as a clause ("model.safetensors does not match …")."""
    if not isinstance(files, dict) or not files or not all(
            isinstance(r, dict) for r in files.values()):
        return "its build record lists no files"
    try:
        present = {p.name: p for p in folder.iterdir()}
    except OSError as exc:
        return f"the folder cannot be read ({exc.strerror or exc})"
    extra = sorted(set(present) - set(files) - {BUILD_MARKER})
    if extra:
        shown = ", ".join(extra[:3]) + (f" and {len(extra) - 3} more" if len(extra) > 3 else "")
        return (f"it holds {shown}, which its build did not record (transformers would read "
                f"{'it' if len(extra) == 1 else 'them'} too)")
    for name, record in files.items():
        path = present.get(name)
        if path is None:
            return f"{name} is missing"
        if path.is_symlink() or not path.is_file():
            return f"{name} is not a plain file"
        if path.stat().st_size != record.get("size"):
            return f"{name} has another size than when it was built"
    for name, record in files.items():
        try:
            digest = sha256_now(present[name])
        except OSError as exc:
            return f"{name} cannot be read ({exc.strerror or exc})"
        if digest != record.get("sha256"):
            return f"{name} does not match its SHA-256 recorded when it was built"
    return None


def read_marker(target: Path) -> dict[str, Any] | None:
    """The marker of a finished copy in ``target`` (None: missing, unreadable or not a copy)."""
    try:
        marker = json.loads((target / BUILD_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or not (target / "config.json").is_file() \
            or not any(target.glob("*.safetensors")):
        return None
    return marker
