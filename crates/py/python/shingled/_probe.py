"""`probe`: the PB-capacity and band probes (``shingled probe all``) on a drive model.

>>> found = shingled.probe(hidden=5)                                    # doctest: +SKIP
>>> found["pb"]["pb_bytes"], found["bands"]["samples"][0]["band_size"]
>>> found["hidden"]["pb_bytes"]             # the truth a drawn drive keeps hidden from the probe

The result is the CLI's JSON (``shingled probe all --output json``): ``target``, ``pb`` (SAC
§5.1's IOPS windows and the cliff), ``bands`` (SAC §5.2's reads and the bands found around the
middle of the drive), ``layout``, ``layout_scope`` (``None``, or what the layout cannot tell
when the bands came from one region: fixed and LBA-dependent bands look alike there), ``drive``
(a drive profile with what was detected) and ``hidden``.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

from . import _core


def probe(drive: Optional[str] = None, *, hidden: Optional[int] = None, seed: int = 0) -> Dict[str, Any]:
    """Detects the persistent-buffer capacity, then the band sizes, of the dm-smr profile
    ``drive`` (see :func:`shingled.drives`) or of the drive drawn with seed ``hidden`` (scaled
    down 100×: seconds, where a full-size profile takes minutes); neither probes ``hidden=0``.
    ``seed`` orders the probes' writes. Raises :class:`shingled.ProbeError` (a
    :class:`ShingledError`) for an unknown profile, one without a persistent buffer, or a probe
    that finds no cliff or no band."""
    return json.loads(_core.probe(drive, hidden, seed))
