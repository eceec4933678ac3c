"""The ends of the intervals the checker compares, as the library's test reads them:
integer ends, the neighbouring double or float32, a double's float32 rounded to nearest,
down or up (beyond float32's range: infinite, as the library's)."""

from __future__ import annotations

import math

import numpy as np

INF = math.inf


def ceil_end(v: float) -> float:
    return float(math.ceil(v)) if math.isfinite(v) else v


def floor_end(v: float) -> float:
    return float(math.floor(v)) if math.isfinite(v) else v


def before(v: float) -> float:
    return float(np.nextafter(v, -INF)) if math.isfinite(v) else v


def after(v: float) -> float:
    return float(np.nextafter(v, INF)) if math.isfinite(v) else v


def before32(v: float) -> float:
    if not math.isfinite(v):
        return v
    return float(np.nextafter(np.float32(v), np.float32(-np.inf)))


def after32(v: float) -> float:
    if not math.isfinite(v):
        return v
    return float(np.nextafter(np.float32(v), np.float32(np.inf)))


def f32_nearest(v: float) -> float:
    with np.errstate(over="ignore"):  # beyond float32's range: infinite, as the library's
        return float(np.float32(v))


def f32_down(v: float) -> float:
    if not math.isfinite(v):
        return v
    with np.errstate(over="ignore"):  # beyond float32's range: infinite, then its neighbour
        x = np.float32(v)
    return float(x if float(x) <= v else np.nextafter(x, np.float32(-np.inf)))


def f32_up(v: float) -> float:
    if not math.isfinite(v):
        return v
    with np.errstate(over="ignore"):  # beyond float32's range: infinite, then its neighbour
        x = np.float32(v)
    return float(x if float(x) >= v else np.nextafter(x, np.float32(np.inf)))
