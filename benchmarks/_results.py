"""Writing a benchmark's JSON: one place for the end-of-run stamp, the file and the echo."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_results(path: Path, res: dict[str, Any], indent: int = 2) -> None:
    """Record the load average at the end in ``res["machine"]``, write ``res`` to ``path`` and print it."""
    res.setdefault("machine", {})["loadavg_at_end"] = os.getloadavg()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(res, indent=indent)
    path.write_text(text + "\n")
    print(text)
