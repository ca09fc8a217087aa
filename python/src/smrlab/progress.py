"""Progress display of a run: a bar on a terminal, plain lines otherwise (CI logs).

A progress bar in a CI log is noise (carriage returns, hundreds of redraws), and a plain line per
trial on a terminal scrolls away what matters, so the display is chosen by whether stderr is a
terminal.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO

from tqdm import tqdm

from smrlab.grid import Job


def format_duration(seconds: float) -> str:
    """Seconds as 1h02m, 3m05s or 4.2s."""
    if seconds >= 3600:
        return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"
    if seconds >= 60:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{seconds:.1f}s"


def format_throughput(ops_per_s: float) -> str:
    """Operations per second in the unit papers use (Mops/s)."""
    return f"{ops_per_s / 1e6:.2f} Mops/s"


class Progress(Protocol):
    """What the runner reports as it goes."""

    def start(self, total: int) -> None: ...
    def begin(self, job: Job) -> None: ...
    def done(self, job: Job, ok: bool, detail: str, elapsed: float) -> None: ...
    def note(self, message: str) -> None: ...
    def close(self) -> None: ...


class LineProgress:
    """One line per finished trial, with a count and an estimate of the time left."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.total = 0
        self.count = 0
        self.started = time.monotonic()

    def start(self, total: int) -> None:
        self.total = total
        self.started = time.monotonic()

    def begin(self, job: Job) -> None:
        pass

    def done(self, job: Job, ok: bool, detail: str, elapsed: float) -> None:
        self.count += 1
        width = len(str(self.total))
        spent = time.monotonic() - self.started
        left = spent / self.count * (self.total - self.count)
        eta = f"  eta {format_duration(left)}" if self.count < self.total else ""
        status = "ok  " if ok else "FAIL"
        print(
            f"[{self.count:{width}d}/{self.total}] {status} {job.label}: {detail} "
            f"({format_duration(elapsed)}){eta}",
            file=self.stream,
            flush=True,
        )

    def note(self, message: str) -> None:
        print(message, file=self.stream, flush=True)

    def close(self) -> None:
        pass


class BarProgress:
    """A tqdm bar whose description is the configuration being run."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.bar: tqdm | None = None

    def start(self, total: int) -> None:
        self.bar = tqdm(
            total=total,
            file=self.stream,
            unit="trial",
            dynamic_ncols=True,
            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]",
        )

    def begin(self, job: Job) -> None:
        if self.bar is not None:
            self.bar.set_description_str(job.label, refresh=True)

    def done(self, job: Job, ok: bool, detail: str, elapsed: float) -> None:
        if self.bar is None:
            return
        if ok:
            self.bar.set_postfix_str(f"last {detail}", refresh=False)
        else:
            self.bar.write(f"FAIL {job.label}: {detail}", file=self.stream)
        self.bar.update(1)

    def note(self, message: str) -> None:
        if self.bar is not None:
            self.bar.write(message, file=self.stream)
        else:
            print(message, file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def make_progress(stream: TextIO | None = None) -> Progress:
    """A bar if the stream is a terminal, plain lines otherwise."""
    stream = stream or sys.stderr
    return BarProgress(stream) if stream.isatty() else LineProgress(stream)
