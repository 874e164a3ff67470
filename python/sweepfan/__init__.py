"""sweepfan: broad-phase collision detection for millions of spheres, boxes and polygons on the
GPU (wgpu: Vulkan, Metal, DX12) or the CPU. NumPy arrays in, touching pairs out.

    import numpy as np, sweepfan
    centers = np.random.default_rng(1).uniform(0, 100, (100_000, 3)).astype(np.float32)
    pairs = sweepfan.sphere_pairs(centers, 0.5)                  # (K, 2) uint32, i < j, sorted
    pairs = sweepfan.sphere_pairs(centers, 0.5, backend="cpu")   # the same pairs, on the CPU

Every function and class takes backend="auto" (the default: a hardware GPU when there is one,
else the CPU; default_backend() says which), "cpu" or "gpu" (a software adapter such as lavapipe
named there warns: SoftwareAdapterWarning). Empty scenes give empty (0, 2) arrays.

Functions: sphere_pairs, world_pairs (many worlds in one call), choose_method, obb_pairs, polygon_pairs, adapters, default_backend,
clear_caches; sphere_contacts, obb_contacts and polygon_contacts (normals, depths and points of
the touching pairs, as a dict of arrays; backend="cpu" by default, "gpu" or "auto" too); the classes
BoxBroadPhase (axis-aligned boxes by your ids: set, remove, update -> pairs found and lost by
id) and BroadPhase, which keeps its buffers between frames and reports the pairs found and lost in each
(track_events=True); EventTracker gives the same found and lost pairs for any pair list
(obb_pairs' or polygon_pairs' frames, say). Sphere methods (METHODS): "auto" (the default: grid, sap, x or brute_force,
chosen from the spheres; choose_method says which and why), grid, sap, brute_force,
origin_distance, x, xy, xyz, min_axis.
"""

import os as _os
import stat as _stat
import tempfile as _tempfile


def _quiet_wayland() -> None:
    # libwayland, which the Vulkan loader loads, prints "error: XDG_RUNTIME_DIR is invalid or not
    # set" on every adapter probe when that variable is unset: a false alarm for headless work,
    # silenced with a private directory (the CLI does the same, docs/design.md §8.4).
    if _os.name != "posix" or _os.path.isdir(_os.environ.get("XDG_RUNTIME_DIR") or "/nonexistent/"):
        return
    path = _os.path.join(_tempfile.gettempdir(), f"sweepfan-xdg-{_os.getuid()}")
    try:
        _os.makedirs(path, mode=0o700, exist_ok=True)
        st = _os.lstat(path)
    except OSError:
        return
    # Only our own private directory (not a symbolic link, not another user's made first).
    if not _stat.S_ISDIR(st.st_mode) or st.st_uid != _os.getuid() or st.st_mode & 0o077:
        return
    _os.environ["XDG_RUNTIME_DIR"] = path


_quiet_wayland()

from ._sweepfan import (  # noqa: E402
    BACKENDS,
    METHODS,
    BoxBroadPhase,
    BroadPhase,
    EventTracker,
    SoftwareAdapterWarning,
    __version__,
    adapters,
    choose_method,
    clear_caches,
    default_backend,
    obb_contacts,
    obb_pairs,
    polygon_contacts,
    polygon_pairs,
    sphere_contacts,
    sphere_pairs,
    world_pairs,
    SHARED,
)

__all__ = [
    "BACKENDS",
    "METHODS",
    "BoxBroadPhase",
    "BroadPhase",
    "EventTracker",
    "SoftwareAdapterWarning",
    "__version__",
    "adapters",
    "choose_method",
    "clear_caches",
    "default_backend",
    "obb_contacts",
    "obb_pairs",
    "polygon_contacts",
    "polygon_pairs",
    "sphere_contacts",
    "sphere_pairs",
    "world_pairs",
    "SHARED",
]
