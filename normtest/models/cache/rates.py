"""How long this machine takes to make one unit of each kind of data for a model: the rate a
rerun's time is estimated from (:mod:`normtest.audit.next_steps`).

An audit that computed a kind's data fresh — its vectors (and, for sentences, their surprisal)
not read from the embedding cache — knows what one unit of it costs here: a word, a sentence, a
document's prefixes. It records that rate in ``<cache root>/rates.json`` (model → kind →
seconds per unit, with the sample it was measured on); a later audit that read the same data
from the cache, and so cannot time their making, estimates new data at the recorded rate. A
planning figure of this machine, never a measurement the report's numbers depend on; a file that
cannot be read or written is ignored (the estimate then says less).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from normtest.base.paths import atomic_write, default_cache_dir, published
from normtest.errors import NormtestError

__all__ = ["RATES_FILE", "UNIT_OF_KIND", "rate", "record"]

#: The file under the cache root.
RATES_FILE = "rates.json"

#: The unit of each kind of data (the sample setting that counts it): a word, a sentence, a
#: document's prefixes.
UNIT_OF_KIND = {"words": "words", "texts": "sentences", "prefixes": "documents"}

#: Computed items that count a kind as made fresh: at least this many per unit of its sample.
FRESH = 1.0


def _path() -> Path:
    return default_cache_dir() / RATES_FILE


def _read() -> dict[str, Any]:
    try:
        data = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def rate(model: str, kind: str) -> float | None:
    """Seconds per unit of ``kind`` (``words``, ``texts``, ``prefixes``) for ``model`` on this
    machine, as last recorded; None when never recorded (or unreadable)."""
    entry = _read().get(model)
    found = entry.get(kind) if isinstance(entry, dict) else None
    value = found.get("seconds_per_unit") if isinstance(found, dict) else None
    return float(value) if isinstance(value, int | float) and math.isfinite(value) \
        and value > 0 else None


def record(model: str, kind: str, seconds: float, units: int) -> None:
    """Keep ``seconds / units`` as ``model``'s rate for ``kind`` (an unwritable cache: nothing
    kept)."""
    if units <= 0 or not (math.isfinite(seconds) and seconds > 0):
        return
    data = _read()
    found = data.get(model)
    entry: dict[str, Any] = found if isinstance(found, dict) else {}
    entry[kind] = {"seconds_per_unit": seconds / units, "units": units}
    data[model] = entry
    try:
        atomic_write(_path(), published(json.dumps(data, indent=1, sort_keys=True) + "\n"))
    except (OSError, NormtestError):  # a read-only cache: the next estimate says less
        pass
