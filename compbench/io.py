"""Instance files: JSON (one instance), JSON Lines (one per line) and NPZ (arrays + metadata).

All three read and write losslessly.  In JSON, ``null`` is -inf (forbidden).  Every error is an
:class:`InstanceError` whose one-line message names the file, the line or instance id, and the field.
"""

from __future__ import annotations

import json
import math
import tokenize
import zipfile
import zlib
from os import PathLike
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from .files import atomic_output, text_lines
from .limits import available_memory
from .problem import Length, Problem, ProblemError, expect_problem, sibling_triples

FORMAT = "compbench.instance/1"
_CORE_KEYS = {"format", "id", "tokens", "length", "single_root", "scores"}


class InstanceError(ValueError):
    """Bad instance data; the message is one line naming file, line/id and field."""


def _where(path: str | PathLike, line: int | None, instance_id: str | None) -> str:
    parts = [str(path)]
    if line is not None:
        parts.append(f"line {line}")
    if instance_id:
        parts.append(f"id {instance_id}")
    return ": ".join(parts)


def _nulls_to_neg_inf(values: Any, field: str = "scores") -> Any:
    """A JSON score array with null as -inf; anything but numbers, null and arrays is refused (a number written
    as a string, a boolean) with the index where it is."""
    def convert(value: Any, index: tuple[int, ...]) -> Any:
        if value is None:
            return -math.inf
        if isinstance(value, list):
            return [convert(v, (*index, i)) for i, v in enumerate(value)]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ProblemError(field, f"expected a number or null at index {index}, got {value!r}"[:200])
        return value

    return convert(values, ())


def _neg_inf_to_nulls(array: np.ndarray) -> Any:
    if array.ndim == 0:
        value = float(array)
        return None if value == -math.inf else value
    return [_neg_inf_to_nulls(row) for row in array]


def _metadata_from_dict(data: Any) -> dict[str, Any]:
    """Problem keyword arguments from everything in an instance record except its scores."""
    if not isinstance(data, dict):
        raise ProblemError("instance", f"expected a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise ProblemError("format", f"expected {FORMAT!r}, got {data.get('format')!r}")
    length = data.get("length")
    if isinstance(length, dict):
        if set(length) != {"min", "max"}:
            raise ProblemError("length", f"a range needs exactly the keys min and max, got {sorted(length)}")
        length = Length(length["min"], length["max"])
    elif isinstance(length, float):
        raise ProblemError("length", f"expected an integer, got {length!r}")
    single_root = data.get("single_root", False)
    if not isinstance(single_root, bool):
        raise ProblemError("single_root", f"expected true or false, got {single_root!r}")
    tokens = data.get("tokens")
    if tokens is not None and not isinstance(tokens, list):
        raise ProblemError("tokens", "not an array of strings")
    instance_id = data.get("id", "")
    if not isinstance(instance_id, str):
        raise ProblemError("id", f"expected a string, got {instance_id!r}")
    extra = {k: v for k, v in data.items() if k not in _CORE_KEYS}
    for key in extra:  # a misspelt field would be kept as extra data and the problem read without it
        meant = misspelt_field(key)
        if meant:
            raise ProblemError(key, f"not a field of the format: did you mean {meant}? (extra data takes keys "
                                    "unlike the fields)")
    return dict(length=length, single_root=single_root, tokens=tokens, id=instance_id, extra=extra)


SCORE_FIELDS = frozenset({"token", "arc", "bigram", "sibling"})


def problem_from_dict(data: Any) -> Problem:
    """Build a Problem from a parsed JSON object (raises ProblemError naming the field)."""
    metadata = _metadata_from_dict(data)
    scores = data.get("scores")
    if not isinstance(scores, dict):
        raise ProblemError("scores", "missing or not an object")
    for name in ("arc", "bigram"):
        if not isinstance(scores.get(name), list):
            raise ProblemError(f"scores.{name}", "missing or not an array")
    n = len(scores["arc"]) - 1
    if n < 0:
        raise ProblemError("scores.arc", "must have n+1 >= 1 rows")
    unknown = sorted(set(scores) - SCORE_FIELDS)
    if unknown:  # a misspelt field would otherwise be dropped silently (sibbling: a first-order problem)
        raise ProblemError(f"scores.{unknown[0]}", f"unknown score field (known: {', '.join(sorted(SCORE_FIELDS))})")
    token = scores.get("token")
    if token is None:
        token = [0.0] * n
    elif not isinstance(token, list):
        raise ProblemError("scores.token", "not an array")
    sibling = scores.get("sibling")
    if sibling is not None:
        sibling = _dense_sibling_scores(sibling, n)
    return Problem(_nulls_to_neg_inf(token, "scores.token"), _nulls_to_neg_inf(scores["arc"], "scores.arc"),
                   _nulls_to_neg_inf(scores["bigram"], "scores.bigram"), sibling_scores=sibling, **metadata)


def _dense_sibling_scores(entries: Any, n: int) -> np.ndarray:
    """The dense (n+1)^3 array of a sparse ``[[h, s, k, score], ...]`` list (absent triples score 0)."""
    if not isinstance(entries, list):
        raise ProblemError("scores.sibling", "expected a list of [h, s, k, score] entries")
    dense = np.zeros((n + 1,) * 3)
    possible = sibling_triples(n)
    seen = set()
    for i, entry in enumerate(entries):
        if (not isinstance(entry, list) or len(entry) != 4
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in entry[:3])):
            raise ProblemError(f"scores.sibling[{i}]", f"expected [h, s, k, score] with integer h, s, k, got {entry!r}")
        h, s, k, score = entry
        if not (0 <= min(h, s, k) and max(h, s, k) <= n and possible[h, s, k]):
            raise ProblemError(f"scores.sibling[{i}]", f"({h}, {s}, {k}) is not a head, previous sibling (or the "
                                                     f"head itself) and modifier on one side, within 0..{n}")
        if (h, s, k) in seen:
            raise ProblemError(f"scores.sibling[{i}]", f"({h}, {s}, {k}) appears twice")
        seen.add((h, s, k))
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            raise ProblemError(f"scores.sibling[{i}]", f"score must be a number or null, got {score!r}")
        dense[h, s, k] = -math.inf if score is None else score
    return dense


def _length_to_json(length: Length | None) -> Any:
    if length is None:
        return None
    return length.min if length.is_exact else {"min": length.min, "max": length.max}


def problem_to_dict(problem: Problem) -> dict[str, Any]:
    """The JSON object of a problem (``null`` for -inf)."""
    expect_problem(problem)
    out: dict[str, Any] = {"format": FORMAT, "id": problem.id}
    if problem.tokens is not None:
        out["tokens"] = list(problem.tokens)
    out["length"] = _length_to_json(problem.length)
    out["single_root"] = problem.single_root
    out["scores"] = {
        "token": _neg_inf_to_nulls(problem.token_scores),
        "arc": _neg_inf_to_nulls(problem.arc_scores),
        "bigram": _neg_inf_to_nulls(problem.bigram_scores),
    }
    if problem.sibling_scores is not None:
        sibling = problem.sibling_scores
        listed = sibling_triples(problem.n) & (sibling != 0)
        out["scores"]["sibling"] = [[int(h), int(s), int(k), _neg_inf_to_nulls(sibling[h, s, k])]
                                    for h, s, k in np.argwhere(listed)]
    taken = sorted(_CORE_KEYS & set(problem.extra))
    if taken:  # it would replace the instance's own field: another problem would be read back
        raise InstanceError(f"id {problem.id or '(none)'}: extra.{taken[0]}: a field of the instance format; extra "
                            "data takes other keys")
    for key, value in problem.extra.items():
        why = _not_json({key: value}, "extra")
        if not why and misspelt_field(key):
            why = f"extra.{key}: read back, it would be refused as a misspelling of {misspelt_field(key)}"
        if why:  # written anyway, it would be read back as another value, or not at all
            raise InstanceError(f"id {problem.id or '(none)'}: {why} (extra data is written as JSON and read back "
                                "as it was)")
    out.update(problem.extra)
    return out


def misspelt_field(key: str) -> str | None:
    """The field of the format that ``key`` misspells, or None: the same but for case, ``_`` and ``-``
    (``Length``, ``singleroot``), or one letter added, dropped, changed or two swapped (``lenght``, ``scroes``),
    but for a plural or singular (``lengths``, ``token``, ``score``: extra keys of their own).

    >>> misspelt_field("lenght"), misspelt_field("Single-Root"), misspelt_field("lengths"), misspelt_field("idx")
    ('length', 'single_root', None, None)
    >>> misspelt_field("ID")  # case alone: "id" too (its one-letter edits, "idx", are keys of their own)
    'id'
    """
    def plain(text: str) -> str:
        return text.lower().replace("_", "").replace("-", "")

    for field in sorted(_CORE_KEYS):
        if plain(key) == plain(field):
            return field
        if field != "id" and key.rstrip("s") != field.rstrip("s") and _one_edit_apart(key.lower(), field):
            return field
    return None


def _one_edit_apart(a: str, b: str) -> bool:
    """One letter inserted, deleted or substituted, or two neighbours transposed."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def _not_json(value: Any, where: str) -> str | None:
    """Why ``value`` would not come back from a JSON file as it is (None when it would): JSON's own types only
    (dicts with string keys, lists, strings, integers the reader takes, finite floats, booleans, None)."""
    if value is None or isinstance(value, (bool, str)):
        return _not_unicode(value, where) if isinstance(value, str) else None
    if isinstance(value, int):
        return None if len(str(abs(value))) <= 18 else f"{where}: an integer of more than 18 digits"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where}: {value} is not a JSON number"
    if isinstance(value, list):
        return next(filter(None, (_not_json(v, f"{where}[{i}]") for i, v in enumerate(value))), None)
    if isinstance(value, dict):
        for key, item in value.items():
            why = (_not_unicode(key, f"{where}: the key {key!r}") or _not_json(item, f"{where}.{key}")
                   if isinstance(key, str) else f"{where}: the key {key!r} is not a string")
            if why:
                return why
        return None
    return f"{where}: a {type(value).__name__} is not a JSON value"


def _not_unicode(text: str, where: str) -> str | None:
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as exc:
        return f"{where}: not valid Unicode ({exc.reason} at character {exc.start})"


def _reject_constant(name: str) -> float:
    if name == "-Infinity":
        return -math.inf
    raise ValueError(f"{name} is not allowed (use null for a forbidden score)")


def bounded_int(text: str) -> int:
    """A JSON integer literal of at most 18 digits (``parse_int`` of :func:`json.loads`)."""
    if len(text.lstrip("-")) > 18:  # beyond any length and any score (see compbench.limits)
        raise ValueError(f"integer literal of {len(text)} digits")
    return int(text)


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different (``object_pairs_hook`` of :func:`json.loads`)."""
    record = dict(pairs)
    if len(record) != len(pairs):
        repeated = next(key for key, _ in pairs if sum(k == key for k, _ in pairs) > 1)
        raise ValueError(f"key {repeated!r} appears twice in one object")
    return record


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=bounded_int, object_pairs_hook=unique_keys)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _json_line(problem: Problem) -> str:
    return json.dumps(problem_to_dict(problem), allow_nan=False, separators=(",", ":"))


def _pretty_json(record: dict[str, Any]) -> str:
    """One key per line, one matrix row per line: readable and diff-friendly."""
    def dump(value: Any) -> str:
        return json.dumps(value, allow_nan=False, ensure_ascii=False)

    def block(value: Any, indent: str) -> str:
        if isinstance(value, dict) and value:
            items = [f'{indent}  {dump(k)}: {block(v, indent + "  ")}' for k, v in value.items()]
            return "{\n" + ",\n".join(items) + f"\n{indent}}}"
        if isinstance(value, list) and value and all(isinstance(row, list) for row in value):
            return "[\n" + ",\n".join(f"{indent}  {dump(row)}" for row in value) + f"\n{indent}]"
        return dump(value)

    return block(record, "")


def _suffix(path: Path) -> str:
    name = path.name.lower()
    for suffix in (".jsonl", ".json", ".npz"):
        if name.endswith(suffix):
            return suffix
    raise InstanceError(f"{path}: unknown file type (expected .json, .jsonl or .npz)")


def read_instances(path: str | PathLike) -> Iterator[Problem]:
    """Every instance in a .json, .jsonl or .npz file, in order.

    >>> import compbench, tempfile, os
    >>> p = compbench.generate("gaussian", n=3, seed=0)
    >>> f = os.path.join(tempfile.mkdtemp(), "set.jsonl")
    >>> compbench.write_instances(f, [p, p])
    >>> len(list(compbench.read_instances(f)))
    2
    """
    path = Path(path)
    suffix = _suffix(path)
    try:
        if suffix == ".npz":
            yield from _read_npz(path)
            return
        data = path.read_bytes()
    except OSError as exc:
        raise InstanceError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark, as some editors write, is not content
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InstanceError(f"{_where(path, line, None)}: not UTF-8 text (byte {exc.start}: "
                            f"{data[exc.start:exc.start + 1]!r})") from None
    if suffix == ".json":
        yield _problem_from_text(text, path, None)
        return
    for number, line in enumerate(text_lines(text), start=1):  # a line feed ends a line, not a U+2028
        if line.strip():
            yield _problem_from_text(line, path, number)


def _problem_from_text(text: str, path: Path, line: int | None) -> Problem:
    try:
        data = _parse_json(text)
    except ValueError as exc:
        raise InstanceError(f"{_where(path, line, None)}: malformed JSON ({exc})") from None
    instance_id = data.get("id") if isinstance(data, dict) and isinstance(data.get("id"), str) else None
    try:
        return problem_from_dict(data)
    except ProblemError as exc:
        raise InstanceError(f"{_where(path, line, instance_id)}: {exc}") from None


def read_instance(path: str | PathLike) -> Problem:
    """The single instance in a file (a JSON Lines or NPZ file must hold exactly one)."""
    problems = list(read_instances(path))
    if len(problems) != 1:
        raise InstanceError(f"{path}: expected exactly one instance, found {len(problems)}")
    return problems[0]


def write_instances(path: str | PathLike, problems: Iterable[Problem]) -> None:
    """Write problems to a .jsonl, .npz or (exactly one problem) .json file, whole or not at all (a failed write
    leaves the file that was there)."""
    if not isinstance(path, (str, PathLike)):
        raise TypeError(f"path: expected a file name, got {type(path).__name__} (the path comes first: "
                        "write_instances(path, problems), write_instance(path, problem))")
    path = Path(path)
    problems = [expect_problem(p, f"problems[{k}]") for k, p in enumerate(problems)]
    suffix = _suffix(path)
    if suffix == ".json" and len(problems) != 1:
        raise InstanceError(f"{path}: a .json file holds exactly one instance, got {len(problems)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as partial:
        if suffix == ".npz":
            _write_npz(partial, problems)
        elif suffix == ".json":
            partial.write_text(_pretty_json(problem_to_dict(problems[0])) + "\n", encoding="utf-8")
        else:
            with partial.open("w", encoding="utf-8") as out:
                for problem in problems:
                    out.write(_json_line(problem) + "\n")


def write_instance(path: str | PathLike, problem: Problem) -> None:
    """Write one problem (the format follows the file name's suffix)."""
    write_instances(path, [problem])


# NPZ: arrays token_<i>, arc_<i>, bigram_<i>, optionally sibling_<i> (dense; -inf kept as is) and "meta", a JSON
# list with the rest of each instance (format, id, tokens, length, single_root, extra keys).
def _write_npz(path: Path, problems: list[Problem]) -> None:
    arrays: dict[str, np.ndarray] = {}
    meta = []
    for i, problem in enumerate(problems):
        arrays[f"token_{i}"] = problem.token_scores
        arrays[f"arc_{i}"] = problem.arc_scores
        arrays[f"bigram_{i}"] = problem.bigram_scores
        if problem.sibling_scores is not None:
            arrays[f"sibling_{i}"] = problem.sibling_scores
        record = problem_to_dict(problem)
        del record["scores"]
        meta.append(record)
    arrays["meta"] = np.array(json.dumps(meta, allow_nan=False))
    with path.open("wb") as out:
        np.savez_compressed(out, **arrays)


def _check_npz_members(path: Path) -> None:
    """Refuse an archive that is not a zip of plain numeric .npy members, or whose members declare more memory
    than a quarter of what is available, before anything is allocated."""
    with path.open("rb") as handle:
        if handle.read(4) != b"PK\x03\x04":
            raise InstanceError(f"{path}: not an NPZ archive (no zip header; a .npy file or something else)")
    budget = available_memory() // 4
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                with archive.open(info) as member:
                    version = np.lib.format.read_magic(member)
                    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                                   else np.lib.format.read_array_header_2_0)
                    shape, _, dtype = read_header(member)
                name = info.filename.removesuffix(".npy")
                if dtype.kind not in "iufU" or (dtype.kind == "U" and name != "meta"):
                    raise InstanceError(f"{path}: {name}: expected an array of real numbers, got {dtype}")
                declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
                if declared > budget:
                    raise InstanceError(f"{path}: {name}: declares shape {shape} ({declared / 2**30:.1f} GiB), more "
                                        f"than a quarter of the memory available ({budget * 4 / 2**30:.1f} GiB)")
    except InstanceError:
        raise
    except DAMAGED_ARCHIVE as exc:
        raise InstanceError(f"{path}: not a readable NPZ archive ({exc})") from None


# What reading a damaged or foreign .npz raises: EOFError an empty file, zlib.error a flipped byte in a compressed
# member, RuntimeError a member flagged encrypted (one flipped bit) and its subclass NotImplementedError a zip feature
# (a version) numpy's zipfile does not read, tokenize.TokenError a damaged .npy header.  Model files
# (compbench.cli.common) use the same list.
DAMAGED_ARCHIVE = (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, RuntimeError,
                   tokenize.TokenError)


def _read_npz(path: Path) -> Iterator[Problem]:
    _check_npz_members(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            meta = _parse_json(str(archive["meta"]))
            arrays = {key: archive[key] for key in archive.files if key != "meta"}
    except DAMAGED_ARCHIVE as exc:
        raise InstanceError(f"{path}: not a compbench NPZ file ({exc})") from None
    if not isinstance(meta, list):
        raise InstanceError(f"{path}: meta: expected a list of instance records")
    for i, record in enumerate(meta):
        where = _where(path, None, record.get("id") if isinstance(record, dict) else None) + f": instance {i}"
        try:
            metadata = _metadata_from_dict(record)
            missing = [f"{k}_{i}" for k in ("token", "arc", "bigram") if f"{k}_{i}" not in arrays]
            if missing:
                raise ProblemError("scores", f"missing arrays {', '.join(missing)}")
            yield Problem(arrays[f"token_{i}"], arrays[f"arc_{i}"], arrays[f"bigram_{i}"],
                          sibling_scores=arrays.get(f"sibling_{i}"), **metadata)
        except ProblemError as exc:
            raise InstanceError(f"{where}: {exc}") from None


def instance_hash(problem: Problem) -> str:
    """The content hash of an instance (MIPLIB's identity of an instance is its name and a checksum): sha256 over its
    scores (as float64, -inf included), length condition and root mode; ids, tokens and extra fields do not count.

    >>> from compbench import generate
    >>> p = generate("gaussian", 4, length=2)
    >>> instance_hash(p) == instance_hash(p.replace(id="other")), len(instance_hash(p))
    (True, 16)
    """
    import hashlib

    digest = hashlib.sha256()
    lo, hi = problem.length_bounds()
    mode = "free" if problem.length is None else f"{lo}..{hi}"
    digest.update(f"n={problem.n};length={mode};single_root={problem.single_root};".encode())
    for array in (problem.token_scores, problem.arc_scores, problem.bigram_scores, problem.sibling_scores):
        if array is not None:
            digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return digest.hexdigest()[:16]
