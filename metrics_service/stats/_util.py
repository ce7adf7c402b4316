"""Small helpers shared by the statistics modules."""
from __future__ import annotations

import math
from typing import Any

import numpy as np


def clean_float(value: Any) -> float | None:
    """``value`` as a Python float, or ``None`` for missing/NaN/infinite values (JSON has no NaN)."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def jsonable(obj: Any) -> Any:
    """Recursively turn numpy scalars into Python numbers and NaN/inf into ``None``."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return clean_float(obj)
    return obj
