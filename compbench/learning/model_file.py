"""A model's ``.npz`` file, for every kind (compression models, parser models): its members listed in it, its
``info`` object and its sparse weights, read back whole or refused with a ValueError naming the part.

A damaged zip can lose a member without failing to open (a flipped byte in its name): a loader that asks ``"tagger"
in data`` then reads a model without its tagger, and scores with gold tags.  So a file lists what it holds
(``members``) and a loader checks the list; files written before the list are read as they are.
"""

from __future__ import annotations

import json
from os import PathLike
from typing import Any

import numpy as np

MEMBERS = "members"


def save_arrays(path: str | PathLike, arrays: dict[str, np.ndarray]) -> None:
    """``arrays`` as one compressed ``.npz`` at ``path``, with the list of its members."""
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays, **{MEMBERS: np.array(sorted(arrays))})


def check_members(data: Any) -> None:
    """A ValueError when the file's members are not those it lists (one lost or renamed by damage).

    >>> import io
    >>> buffer = io.BytesIO(); np.savez(buffer, info=np.array("{}"), members=np.array(["info", "weights"]))
    >>> check_members(np.load(io.BytesIO(buffer.getvalue())))
    Traceback (most recent call last):
    ...
    ValueError: damaged: members weights missing
    """
    if MEMBERS not in data.files:
        return
    names = np.asarray(data[MEMBERS])
    if names.ndim != 1 or names.dtype.kind != "U":
        raise ValueError(f"damaged: members: expected a list of names, got shape {names.shape} ({names.dtype})")
    listed = set(names.tolist()) | {MEMBERS}
    missing, unknown = sorted(listed - set(data.files)), sorted(set(data.files) - listed)
    if missing or unknown:
        raise ValueError("damaged: " + "; ".join(part for part in (
            f"members {', '.join(missing)} missing" if missing else "",
            f"members {', '.join(unknown)} not its own" if unknown else "") if part))


def read_info(data: Any) -> dict[str, Any]:
    """The file's ``info`` object (a ValueError when it is not a JSON object)."""
    info = json.loads(str(data["info"]))
    if not isinstance(info, dict):
        raise ValueError(f"info: expected a JSON object, got {type(info).__name__}")
    return info


def dense_weights(data: Any, name: str, shape: tuple[int, int]) -> np.ndarray:
    """A model file's dense weight matrix ``name``: of ``shape`` (features x classes), of finite numbers.

    >>> dense_weights({"w": np.zeros((4, 2))}, "w", (4, 2)).shape
    (4, 2)
    """
    weights = np.asarray(data[name])
    if weights.shape != shape or not np.issubdtype(weights.dtype, np.floating):
        raise ValueError(f"{name}: expected a {shape[0]} x {shape[1]} matrix of numbers, got shape {weights.shape} "
                         f"({weights.dtype})")
    if not np.all(np.isfinite(weights)):
        raise ValueError(f"{name}: expected finite numbers")
    return weights


def array_of(data: Any, name: str, kinds: str, *, length: int | None = None, increasing: bool = False,
             counts: bool = False) -> np.ndarray:
    """A model file's one-dimensional array ``name`` whose dtype kind is one of ``kinds`` ("iu": integers, "iuf":
    numbers, "U": strings), ``length`` long, strictly ``increasing`` (keys a binary search reads), or ``counts``
    (finite, >= 0); else a ValueError naming it.

    >>> array_of({"keys": np.array([3, 1])}, "keys", "iu", increasing=True)
    Traceback (most recent call last):
    ...
    ValueError: keys: expected increasing integers
    """
    array = np.asarray(data[name])
    what = {"iu": "integers", "iuf": "numbers", "U": "strings"}[kinds]
    if array.ndim != 1 or array.dtype.kind not in kinds or (length is not None and len(array) != length):
        raise ValueError(f"{name}: expected a list of {'' if length is None else f'{length} '}{what}, got shape "
                         f"{array.shape} ({array.dtype})")
    if increasing and len(array) > 1 and not np.all(array[1:] > array[:-1]):
        raise ValueError(f"{name}: expected increasing {what}")
    if counts and not (np.all(np.isfinite(array)) and (len(array) == 0 or array.min() >= 0)):
        raise ValueError(f"{name}: expected counts (finite, >= 0)")
    return array


def sparse_weights(data: Any, size: int) -> np.ndarray:
    """The weights 0..size from the file's non-zero entries (``weight_index``, ``weight_value``): every index an
    integer within 0..size (a negative one wrapped around), every value finite.

    >>> sparse_weights({"weight_index": np.array([2]), "weight_value": np.array([0.5])}, 3).tolist()
    [0.0, 0.0, 0.5, 0.0]
    """
    index, values = np.asarray(data["weight_index"]), np.asarray(data["weight_value"])
    if index.ndim != 1 or values.shape != index.shape or not np.issubdtype(index.dtype, np.integer) or (
            len(index) and (index.min() < 0 or index.max() > size)):
        raise ValueError(f"weight_index: expected {values.size} integer indices within 0..{size}, a list as long as "
                         f"weight_value's")
    if not np.issubdtype(values.dtype, np.floating) or not np.all(np.isfinite(values)):
        raise ValueError("weight_value: expected finite numbers")
    weights = np.zeros(size + 1)
    weights[index] = values
    return weights
