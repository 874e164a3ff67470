from typing import Literal, TypedDict, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

__version__: str
METHODS: tuple[str, ...]
BACKENDS: tuple[str, ...]

# adapter=: an index into adapters(), part of an adapter's name, or None (the default).
_Adapter = int | str | None
_Pairs = NDArray[np.uint32]
_Radii = float | ArrayLike

class _AdapterInfo(TypedDict):
    index: int
    name: str
    device_type: str
    backend: str
    driver: str
    driver_info: str
    vendor: int
    device: int

@overload
def sphere_pairs(
    centers: ArrayLike,
    radii: _Radii,
    *,
    world: None = None,
    method: str = "auto",
    backend: str = "auto",
    adapter: _Adapter = None,
    count_only: Literal[False] = False,
) -> _Pairs: ...
@overload
def sphere_pairs(
    centers: ArrayLike,
    radii: _Radii,
    *,
    world: None = None,
    method: str = "auto",
    backend: str = "auto",
    adapter: _Adapter = None,
    count_only: Literal[True],
) -> tuple[int, int]: ...
@overload
def sphere_pairs(
    centers: ArrayLike,
    radii: _Radii,
    *,
    world: None = None,
    method: str = "auto",
    backend: str = "auto",
    adapter: _Adapter = None,
    count_only: bool = False,
) -> _Pairs | tuple[int, int]: ...
@overload
def sphere_pairs(
    centers: ArrayLike,
    radii: _Radii,
    *,
    world: ArrayLike,
    method: str = "auto",
    backend: str = "auto",
    adapter: _Adapter = None,
    count_only: Literal[False] = False,
) -> tuple[_Pairs, np.ndarray, np.ndarray]: ...
@overload
def sphere_pairs(
    centers: ArrayLike,
    radii: _Radii,
    *,
    world: ArrayLike,
    method: str = "auto",
    backend: str = "auto",
    adapter: _Adapter = None,
    count_only: Literal[True],
) -> tuple[int, int]: ...
SHARED: int

@overload
def world_pairs(
    centers: ArrayLike,
    radii: _Radii,
    world: ArrayLike | None = None,
    *,
    method: str = "auto",
    backend: str = "auto",
    adapter: _Adapter = None,
    count_only: Literal[False] = False,
) -> tuple[_Pairs, np.ndarray, np.ndarray]: ...
@overload
def world_pairs(
    centers: ArrayLike,
    radii: _Radii,
    world: ArrayLike | None = None,
    *,
    method: str = "auto",
    backend: str = "auto",
    adapter: _Adapter = None,
    count_only: Literal[True],
) -> tuple[int, int]: ...
def choose_method(
    centers: ArrayLike, radii: _Radii, *, backend: str = "auto", adapter: _Adapter = None
) -> tuple[str, str]: ...
def obb_pairs(
    centers: ArrayLike,
    half_extents: ArrayLike,
    quaternions: ArrayLike,
    *,
    backend: str = "auto",
    adapter: _Adapter = None,
) -> _Pairs: ...
def polygon_pairs(
    vertices: ArrayLike,
    offsets: ArrayLike,
    *,
    backend: str = "auto",
    adapter: _Adapter = None,
) -> _Pairs: ...
class _Contacts(TypedDict):
    pairs: _Pairs
    normals: NDArray[np.float32]
    depths: NDArray[np.float32]
    counts: NDArray[np.uint32]
    points: NDArray[np.float32]
    point_depths: NDArray[np.float32]

def sphere_contacts(
    centers: ArrayLike,
    radii: _Radii,
    *,
    pairs: ArrayLike | None = None,
    backend: str = "cpu",
    adapter: _Adapter = None,
) -> _Contacts: ...
def obb_contacts(
    centers: ArrayLike,
    half_extents: ArrayLike,
    quaternions: ArrayLike,
    *,
    pairs: ArrayLike | None = None,
    backend: str = "cpu",
    adapter: _Adapter = None,
) -> _Contacts: ...
def polygon_contacts(
    vertices: ArrayLike,
    offsets: ArrayLike,
    *,
    pairs: ArrayLike | None = None,
    backend: str = "cpu",
    adapter: _Adapter = None,
) -> _Contacts: ...
def adapters() -> list[_AdapterInfo]: ...
def default_backend() -> Literal["cpu", "gpu"]: ...

class SoftwareAdapterWarning(RuntimeWarning): ...
def clear_caches() -> None: ...

_IdPairs = NDArray[np.uint64]

class BoxBroadPhase:
    def __init__(self, backend: str = "auto", adapter: _Adapter = None) -> None: ...
    def set(
        self, ids: ArrayLike, lo: ArrayLike, hi: ArrayLike, world: ArrayLike | None = None
    ) -> None: ...
    def remove(self, ids: ArrayLike) -> int: ...
    def update(self) -> tuple[_IdPairs, _IdPairs]: ...
    @property
    def pairs(self) -> _IdPairs: ...
    @property
    def found(self) -> _IdPairs: ...
    @property
    def lost(self) -> _IdPairs: ...
    @property
    def found_worlds(self) -> np.ndarray: ...
    @property
    def lost_worlds(self) -> np.ndarray: ...
    @property
    def backend(self) -> str: ...
    def __len__(self) -> int: ...

class EventTracker:
    def __init__(self) -> None: ...
    def update(self, pairs: ArrayLike) -> tuple[_Pairs, _Pairs]: ...
    @property
    def pairs(self) -> _Pairs: ...
    @property
    def frames(self) -> int: ...
    def reset(self) -> None: ...

class BroadPhase:
    def __init__(
        self,
        method: str = "auto",
        backend: str = "auto",
        track_events: bool = False,
        adapter: _Adapter = None,
    ) -> None: ...
    def step(
        self, centers: ArrayLike, radii: _Radii, world: ArrayLike | None = None
    ) -> _Pairs: ...
    def world_groups(
        self, which: str = "pairs"
    ) -> tuple[NDArray[np.uint32], NDArray[np.uint64]]: ...
    @property
    def found(self) -> _Pairs: ...
    @property
    def lost(self) -> _Pairs: ...
    @property
    def tests(self) -> int: ...
    @property
    def frames(self) -> int: ...
    @property
    def choice(self) -> tuple[str, str] | None: ...
    @property
    def method(self) -> str: ...
    @property
    def backend(self) -> str: ...
