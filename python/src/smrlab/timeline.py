"""Readers of smrbench's timeline (format version 1) and garbage-series (versions 1 and 2)
files, docs/timeline-format.md.

A 192-thread timeline holds up to ~20 million events, so rows are parsed with numpy in bulk
(kind names replaced by codes, then one numeric parse) rather than line by line; a file that the
fast path cannot parse falls back to the csv module, which reports the offending line.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from smrlab.errors import UsageError

TIMELINE_FORMAT = "smrlab-timeline"
GARBAGE_FORMAT = "smrlab-garbage-series"

# Kinds of format version 1, in code order; readers ignore kinds they do not know.
KINDS = (
    "batch_free",
    "free_call",
    "epoch_change",
    "token_pass",
    "signal_sent",
    "neutralized_restart",
    "alloc_failure",
)
KIND_CODE = {name: code for code, name in enumerate(KINDS)}
INSTANT_KINDS = frozenset(
    {"epoch_change", "token_pass", "signal_sent", "neutralized_restart", "alloc_failure"}
)
TIMELINE_COLUMNS = ("thread", "kind", "start_ns", "end_ns", "value")
# The columns each readable version requires. Garbage series version 1: the sum over threads at
# each global-epoch change (smrlab before 2026-11); version 2: each thread's own garbage at each
# epoch it began (the Epochs paper's metric).
TIMELINE_VERSIONS = {1: TIMELINE_COLUMNS}
GARBAGE_COLUMNS = {1: ("time_ns", "epoch", "garbage"), 2: ("time_ns", "epoch", "thread", "garbage")}


class FormatError(UsageError):
    """A timeline or garbage-series file that is not in a format this reader knows."""


@dataclass(frozen=True)
class Timeline:
    """Events of one trial, as parallel arrays sorted by (thread, start)."""

    path: Path
    header: dict[str, Any]
    thread: np.ndarray  # int32
    kind: np.ndarray  # int8, index into KINDS
    start: np.ndarray  # int64 ns, relative to the measured start
    end: np.ndarray  # int64 ns
    value: np.ndarray  # int64
    ignored_kinds: dict[str, int] = field(default_factory=dict)

    @property
    def threads(self) -> int:
        """Worker threads of the trial (a stalled thread, if any, is row ``threads``)."""
        return int(self.header.get("threads", int(self.thread.max(initial=-1)) + 1))

    @property
    def rows(self) -> list[int]:
        """Thread rows a viewer should show: every worker, plus the stalled thread if present."""
        present = set(np.unique(self.thread).tolist())
        return sorted(set(range(self.threads)) | present)

    @property
    def truncated_threads(self) -> list[int]:
        """Threads whose event buffer filled: their recording stops early."""
        return [int(t) for t in self.header.get("truncated_threads", [])]

    @property
    def measured_end_ns(self) -> int:
        """End of the measured interval (or of the last event if the header lacks it)."""
        if "measured_end_ns" in self.header:
            return int(self.header["measured_end_ns"])
        return int(self.end.max(initial=0))

    @property
    def config(self) -> dict[str, Any]:
        """The smrbench configuration the trial ran with."""
        return dict(self.header.get("config", {}))

    def __len__(self) -> int:
        return int(self.start.size)

    def kind_mask(self, name: str) -> np.ndarray:
        """Boolean mask of the events of one kind."""
        return self.kind == KIND_CODE[name]

    def select(self, mask: np.ndarray) -> Timeline:
        """The events where mask is true (same header)."""
        return replace(
            self,
            thread=self.thread[mask],
            kind=self.kind[mask],
            start=self.start[mask],
            end=self.end[mask],
            value=self.value[mask],
        )

    def window(
        self,
        start_ns: int | None = None,
        end_ns: int | None = None,
        threads: list[int] | None = None,
    ) -> Timeline:
        """Events overlapping [start_ns, end_ns] on the given threads."""
        mask = np.ones(self.start.size, dtype=bool)
        if start_ns is not None:
            mask &= self.end >= start_ns
        if end_ns is not None:
            mask &= self.start <= end_ns
        if threads is not None:
            mask &= np.isin(self.thread, np.asarray(threads, dtype=np.int32))
        return self.select(mask)


@dataclass(frozen=True)
class GarbageSeries:
    """Garbage per epoch, one entry per epoch in increasing order.

    From a version 2 file, the Epochs paper's Figure 4 metric: for each epoch, the sum over the
    threads that began it of the nodes each had unreclaimed (limbo bags and amortized freeable
    list) when it began it; ``time_ns`` is when the first of them did, ``threads`` how many did
    (a thread that skipped an epoch adds nothing to it, and the last epochs of a trial were
    begun by fewer threads). From a version 1 file, the sum over all threads at each
    global-epoch change, ``threads`` None."""

    path: Path
    header: dict[str, Any]
    time_ns: np.ndarray
    epoch: np.ndarray
    garbage: np.ndarray
    threads: np.ndarray | None = None

    @property
    def per_thread(self) -> bool:
        """Whether the sums are of each thread's garbage as it began the epoch (version 2)."""
        return self.threads is not None

    @property
    def config(self) -> dict[str, Any]:
        """The smrbench configuration the trial ran with."""
        return dict(self.header.get("config", {}))

    def __len__(self) -> int:
        return int(self.epoch.size)


def read_timeline(path: str | Path, *, include_prefill: bool = False) -> Timeline:
    """Reads a timeline file. Prefill events (negative times) are dropped unless asked for."""
    path = Path(path)
    header, columns, body, first_line = _read_parts(
        path, TIMELINE_FORMAT, TIMELINE_VERSIONS, count_key="events"
    )
    ignored: dict[str, int] = {}
    table = None
    if columns == TIMELINE_COLUMNS:
        table = _fast_timeline(body)
    if table is None:
        table = _slow_timeline(path, columns, body, first_line, ignored)
    thread, kind, start, end, value = table
    order = np.lexsort((start, thread))
    if not np.all(order[:-1] < order[1:]):  # files are grouped and sorted; re-sort if not
        thread, kind, start, end, value = (a[order] for a in (thread, kind, start, end, value))
    timeline = Timeline(
        path, header, thread.astype(np.int32), kind.astype(np.int8), start, end, value, ignored
    )
    if not include_prefill:
        timeline = timeline.select(timeline.end >= 0)
    return timeline


def read_garbage_series(path: str | Path, *, include_prefill: bool = False) -> GarbageSeries:
    """Reads a garbage-series file. Epochs first begun before the measured start (during the
    prefill, at negative times) are dropped unless asked for, as read_timeline drops events."""
    path = Path(path)
    header, columns, body, first_line = _read_parts(
        path, GARBAGE_FORMAT, GARBAGE_COLUMNS, count_key="points"
    )
    required = GARBAGE_COLUMNS[header["version"]]
    data = _parse_ints(body, len(columns)) if columns == required else None
    if data is None:
        data = _slow_ints(path, columns, body, first_line)
    index = {name: columns.index(name) for name in required}
    time_ns, epoch, garbage = (data[:, index[name]] for name in ("time_ns", "epoch", "garbage"))
    if header["version"] == 1:
        series = GarbageSeries(path, header, time_ns, epoch, garbage)
    else:
        series = _per_epoch(path, header, time_ns, epoch, garbage)
    if include_prefill:
        return series
    measured = series.time_ns >= 0
    return replace(
        series,
        time_ns=series.time_ns[measured],
        epoch=series.epoch[measured],
        garbage=series.garbage[measured],
        threads=None if series.threads is None else series.threads[measured],
    )


def _per_epoch(
    path: Path, header: dict[str, Any], time_ns: np.ndarray, epoch: np.ndarray, garbage: np.ndarray
) -> GarbageSeries:
    """Sums each thread's points per epoch (version 2 rows are one thread beginning an epoch)."""
    order = np.lexsort((time_ns, epoch))
    time_ns, epoch, garbage = time_ns[order], epoch[order], garbage[order]
    epochs, first, threads = np.unique(epoch, return_index=True, return_counts=True)
    sums = np.add.reduceat(garbage, first) if epochs.size else garbage[:0]
    return GarbageSeries(path, header, time_ns[first], epochs, sums, threads)


def _read_parts(
    path: Path,
    expected_format: str,
    columns_by_version: dict[int, tuple[str, ...]],
    *,
    count_key: str,
) -> tuple[dict, tuple[str, ...], bytes, int]:
    """Header object, CSV column names, the rows' bytes, and the line number of the first row.
    A file with fewer rows than its header's ``count_key`` says, or whose last row lacks its
    newline, was cut short (a copy interrupted, a full disk): FormatError, not a partial
    drawing whose missing part would read as a quiet stretch of the trial."""
    if path.exists() and not path.is_file():  # a FIFO would block the read for ever
        raise FormatError(f"cannot read {path}: not a regular file")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise FormatError(f"cannot read {path}: {error.strerror}") from None
    first, _, rest = data.partition(b"\n")
    try:
        header = json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise FormatError(
            f"{path}: first line is not a JSON header; is this a {expected_format} file?"
        ) from None
    if not isinstance(header, dict) or header.get("format") != expected_format:
        found = header.get("format") if isinstance(header, dict) else None
        raise FormatError(f"{path}: format {found!r}, expected {expected_format!r}")
    version = header.get("version")
    readable_version = isinstance(version, int) and not isinstance(version, bool)
    if not readable_version or version not in columns_by_version:
        readable = " and ".join(str(v) for v in columns_by_version)
        raise FormatError(
            f"{path}: {expected_format} version {version!r} is "
            f"not supported (this smrlab reads version {readable})"
        )
    required = columns_by_version[version]
    column_line, _, body = rest.partition(b"\n")
    columns = tuple(name.strip() for name in column_line.decode("utf-8", "replace").split(","))
    missing = [name for name in required if name not in columns]
    if missing:
        raise FormatError(f"{path}: CSV header lacks column(s) {', '.join(missing)}")
    _check_complete(path, header, body, count_key)
    return header, columns, body, 3


def _check_complete(path: Path, header: dict, body: bytes, count_key: str) -> None:
    """FormatError if the rows are not all there (smrbench ends every row with a newline and
    writes their number in the header; a file written by hand may leave the number out)."""
    rows = body.count(b"\n")
    announced = header.get(count_key)
    if not isinstance(announced, int) or isinstance(announced, bool):
        announced = None
    if (body and not body.endswith(b"\n")) or (announced is not None and rows < announced):
        of = f" of the {announced} its header announces" if announced is not None else ""
        raise FormatError(f"{path}: truncated: {rows} complete rows{of} (the file was cut short)")


def _parse_ints(body: bytes, width: int) -> np.ndarray | None:
    """All numbers of a purely numeric CSV body as an (n, width) int64 array, or None."""
    text = body.replace(b"\r", b"").strip()
    if not text:
        return np.zeros((0, width), dtype=np.int64)
    try:
        flat = np.fromstring(text.replace(b"\n", b","), dtype=np.int64, sep=",")
    except ValueError:
        return None
    if flat.size % width or flat.size // width != text.count(b"\n") + 1:
        return None
    return flat.reshape(-1, width)


def _fast_timeline(body: bytes) -> tuple[np.ndarray, ...] | None:
    """Parses rows in the documented column order; None if anything is not a known kind or a
    number (a newer smrbench's kinds, a malformed row): the csv path then decides, row by row.
    """
    for name, code in KIND_CODE.items():
        body = body.replace(b"," + name.encode() + b",", b"," + str(code).encode() + b",")
    if re.search(rb"[^0-9,\n\r-]", body):
        return None
    data = _parse_ints(body, len(TIMELINE_COLUMNS))
    if data is None:
        return None
    return data[:, 0], data[:, 1], data[:, 2], data[:, 3], data[:, 4]


def _slow_timeline(
    path: Path, columns: tuple[str, ...], body: bytes, first_line: int, ignored: dict[str, int]
) -> tuple[np.ndarray, ...]:
    index = {name: columns.index(name) for name in TIMELINE_COLUMNS}
    rows: list[tuple[int, int, int, int, int]] = []
    reader = csv.reader(io.StringIO(body.decode("utf-8", "replace")))
    for number, row in enumerate(reader, start=first_line):
        if not row:
            continue
        try:
            kind = row[index["kind"]].strip()
            if kind not in KIND_CODE:
                ignored[kind] = ignored.get(kind, 0) + 1
                continue
            rows.append(
                (
                    int(row[index["thread"]]),
                    KIND_CODE[kind],
                    int(row[index["start_ns"]]),
                    int(row[index["end_ns"]]),
                    int(row[index["value"]]),
                )
            )
        except (IndexError, ValueError):
            raise FormatError(f"{path}:{number}: malformed row: {','.join(row)}") from None
    data = np.array(rows, dtype=np.int64).reshape(-1, 5)
    return data[:, 0], data[:, 1], data[:, 2], data[:, 3], data[:, 4]


def _slow_ints(path: Path, columns: tuple[str, ...], body: bytes, first_line: int) -> np.ndarray:
    rows = []
    reader = csv.reader(io.StringIO(body.decode("utf-8", "replace")))
    for number, row in enumerate(reader, start=first_line):
        if not row:
            continue
        try:
            rows.append([int(cell) for cell in row])
        except ValueError:
            raise FormatError(f"{path}:{number}: malformed row: {','.join(row)}") from None
        if len(row) != len(columns):
            raise FormatError(f"{path}:{number}: {len(row)} fields, expected {len(columns)}")
    return np.array(rows, dtype=np.int64).reshape(-1, len(columns))
