"""Float32 copies of GGUF models, built once, checked, and installed atomically.

What the GGUF-shipped models share (SmolLM2 in :mod:`normtest.adapters.embedded`, Gemma 3 and
nomic-embed in :mod:`normtest.models.installable`): transformers dequantises a GGUF file
slowly (tens of seconds) and a GGUF-loaded model refuses ``save_pretrained``, so normtest rebuilds a
plain float32 model from it (:func:`float32_copy`), saves it into a temporary folder beside the
target, checks it against the model it came from, writes a marker (:data:`BUILD_MARKER`: the
source file, its hash, the check, the library versions and every file's size and SHA-256) and
only then renames the folder into place (:func:`build_folder`). An interrupted or failed build
leaves neither the target nor a half-written folder behind; later loads take about a second.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from normtest.adapters.built_folder import BUILD_MARKER, check_files, folder_digests, read_marker
from normtest.adapters.transformers_base import _PROBE_TEXT
from normtest.errors import NormtestError

# isort: split
# torch and transformers after transformers_base, whose import turns their absence into the
# install hint
import torch
import transformers

__all__ = [
    "BUILD_MARKER",
    "build_folder",
    "float32_copy",
    "folder_digests",
    "install_folder",
    "load_causal_gguf",
    "max_logit_gap",
    "memoised_gguf_name_map",
    "probe_ids",
    "read_marker",
    "refuse_gap",
]

log = logging.getLogger(__name__)

@contextlib.contextmanager
def memoised_gguf_name_map() -> Iterator[None]:
    """Memoise gguf's tensor-name table while transformers reads a GGUF file (and hide its bar).

    transformers rebuilds the same table once per submodule (~400 times, ~14 s for SmolLM2); the
    table is read-only, so one copy per (architecture, layer count) gives the same mapping.
    """
    import gguf
    from transformers import modeling_gguf_pytorch_utils as reader

    original = gguf.get_tensor_name_map
    setattr(gguf, "get_tensor_name_map", functools.cache(original))  # noqa: B010
    # its "Converting and de-quantizing GGUF tensors" bar is a bare tqdm: normtest says instead
    # what it builds and how long that takes
    bar = getattr(reader, "tqdm", None)
    if bar is not None:
        setattr(reader, "tqdm", functools.partial(bar, disable=True))  # noqa: B010
    try:
        yield
    finally:
        setattr(gguf, "get_tensor_name_map", original)  # noqa: B010
        if bar is not None:
            setattr(reader, "tqdm", bar)  # noqa: B010


def float32_copy(model: Any) -> Any:
    """A plain float32 copy of a GGUF-loaded model (which refuses ``save_pretrained``)."""
    config_dict = model.config.to_dict()
    for key in ("quantization_config", "_name_or_path", "_model_name_or_path"):
        config_dict.pop(key, None)
    config = type(model.config).from_dict(config_dict)
    config.dtype = "float32"
    with torch.device("meta"):
        plain = type(model)(config)
    state = {k: v.detach().to(torch.float32) for k, v in model.state_dict().items()}
    plain.load_state_dict(state, strict=True, assign=True)
    plain.tie_weights()
    return plain.eval()


def load_causal_gguf(gguf: Path, *, tokenizer: bool = True, what: str = "a GGUF model"
                     ) -> tuple[Any, Any]:
    """A causal LM read from a GGUF file by transformers (dequantised to float32; slow):
    (model, tokenizer|None)."""
    try:
        with memoised_gguf_name_map():
            model = transformers.AutoModelForCausalLM.from_pretrained(
                gguf.parent, gguf_file=gguf.name, dtype=torch.float32,
                trust_remote_code=False,
            )
        tok = (
            transformers.AutoTokenizer.from_pretrained(
                gguf.parent, gguf_file=gguf.name, trust_remote_code=False
            )
            if tokenizer else None
        )
    except ImportError as exc:
        raise NormtestError(
            f"reading {what}'s GGUF file needs the gguf and accelerate packages "
            f"(pip install 'normtest[models]'): {exc}"
        ) from exc
    model.eval()
    return model, tok


def max_logit_gap(reference: Any, folder: Path, ids: Sequence[int]) -> float:
    """Largest |logit difference| on ``ids`` between ``reference`` and the causal LM saved in
    ``folder``."""
    saved = transformers.AutoModelForCausalLM.from_pretrained(
        folder, dtype=torch.float32, trust_remote_code=False
    ).eval()
    batch = torch.tensor([list(ids)])
    with torch.inference_mode():
        gap = (reference(input_ids=batch).logits - saved(input_ids=batch).logits).abs().max()
    return float(gap)


def probe_ids(tokenizer: Any, start: int | None) -> list[int]:
    """The probe text's ids after ``start`` (a model's start of context), for the checks."""
    ids = [int(i) for i in tokenizer(_PROBE_TEXT, add_special_tokens=False)["input_ids"]]
    return ids if start is None else [start, *ids]


def build_folder(target: Path, fill: Callable[[Path], dict[str, Any]],
                 target_is_valid: Callable[[], bool], *, digests: bool = False,
                 replace: bool = False) -> Path:
    """Build ``target`` atomically: ``fill(work)`` writes the model into a temporary folder
    beside it, checks it and returns the marker's contents; the marker is written (with every
    file's size and SHA-256 when ``digests``, and the folder is then checked against it whole,
    :func:`~normtest.adapters.built_folder.check_files`) and the folder renamed into place.

    A ``target`` already there is kept when ``target_is_valid()`` (another process finished
    first), else swapped out whole for the new copy; ``replace`` swaps it out in any case (an
    install with ``--force``, or over a damaged copy). ``fill`` raises to refuse the copy;
    nothing is left behind then, nor on an interruption, and ``target`` is never half-replaced.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.building-", dir=target.parent))
    try:
        marker = fill(work)
        if digests:
            marker["files"] = folder_digests(work)
        marker.setdefault("transformers", transformers.__version__)
        marker.setdefault("torch", torch.__version__)
        (work / BUILD_MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        for path in work.iterdir():  # safetensors writes its files private to their creator
            path.chmod(0o644)
        work.chmod(0o755)  # mkdtemp makes the folder private to its creator
        if digests and (problem := check_files(work, marker["files"])) is not None:
            raise NormtestError(f"the copy just built in {work} fails its own check ({problem});"
                                " nothing was installed: run the install again")
        install_folder(work, target, None if replace else target_is_valid)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def install_folder(work: Path, target: Path,
                   target_is_valid: Callable[[], bool] | None) -> None:
    """Move the finished ``work`` folder to ``target`` by rename (same file system).

    A ``target`` already there stays when ``target_is_valid()`` says so; otherwise (or with
    None) the two folders are swapped: in one step where the system can (Linux's
    ``renameat2(RENAME_EXCHANGE)``), else by two renames with Ctrl-C held back between them and
    the old copy put back if the second fails. The old copy ends in ``work`` or a temporary
    sibling, which the caller removes: ``target`` is always the old copy whole or the new one.
    """
    try:
        os.replace(work, target)  # no target yet (or an empty folder): one rename
        return
    except OSError:
        if not target.exists():
            raise
    if target_is_valid is not None and target_is_valid():  # another process finished first
        return
    if _exchange(work, target):
        return
    stale = Path(tempfile.mkdtemp(prefix=f".{target.name}.stale-", dir=target.parent))
    try:
        with _interrupts_held():
            os.replace(target, stale / target.name)
            try:
                os.replace(work, target)
            except BaseException:
                os.replace(stale / target.name, target)  # the old copy back, whole
                raise
    finally:
        shutil.rmtree(stale, ignore_errors=True)


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one atomic step (Linux ``renameat2`` with
    ``RENAME_EXCHANGE``); False where the system or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a C library without it (glibc < 2.28, musl)
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False  # a kernel or file system without the exchange: two renames instead
    raise OSError(err, os.strerror(err), str(b))


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) and SIGTERM held back by the system for the duration, delivered right
    after."""
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = mask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, previous)


def refuse_gap(what: str, gap: float, limit: float = 1e-4) -> None:
    """Raise when a saved copy disagrees with the model it came from."""
    if not gap <= limit:
        raise NormtestError(
            f"the float32 copy of {what} disagrees with the GGUF model (max gap {gap:.3g} > "
            f"{limit:g}); report this with your torch and transformers versions"
        )
