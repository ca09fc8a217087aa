"""Runs jobs: one smrbench process per trial, a timeout each, every outcome stored at once.

Each trial is its own process so one crash, hang or leak cannot spoil the others, and so a
trial's peak RSS is its own. Results are committed one by one: Ctrl-C (or a killed machine)
loses at most the trial in flight, and the next run resumes from the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smrlab.errors import Stopped
from smrlab.grid import Job
from smrlab.options import DEFAULT_DURATION_S, OPTIONS_BY_BENCHMARK
from smrlab.progress import Progress, format_throughput
from smrlab.provenance import Identity
from smrlab.smrbench import command
from smrlab.store import Failure, Store

FILE_SUFFIXES = {"timeline": ".timeline", "garbage_series": ".garbage"}


# A STAMP trial at paper size (an input named "...++") is bound by its input, not by a
# duration: a one-client Vacation trial is 30 s of setup and 50-90 s of clients on a 2-core
# machine, past the duration rule's 80 s; a slower machine or a slower allocator is given ten
# times that.
PAPER_SIZE_STAMP_TIMEOUT_S = 1200.0


def default_timeout(job: Job) -> float:
    """A generous per-trial limit: 60 s for start-up and prefill plus 20 × the duration, and
    PAPER_SIZE_STAMP_TIMEOUT_S for a STAMP application's paper-size input."""
    if job.benchmark == "stamp" and str(job.options.get("app", "")).endswith("++"):
        return PAPER_SIZE_STAMP_TIMEOUT_S
    duration = float(job.options.get("duration", DEFAULT_DURATION_S))
    return 60.0 + 20.0 * duration


def job_files(job: Job, directory: Path, identity: Identity | None = None) -> dict[str, Path]:
    """Paths of the files a job asks smrbench to write (timeline, garbage series).

    Named by a hash of the config key and the identity the result is stored under, so they
    are stable across re-runs and unique per job and build: a rebuilt smrbench's recording
    does not overwrite the one of the row it leaves in the store.
    """
    described = OPTIONS_BY_BENCHMARK[job.benchmark]
    wanted = [
        key for key, value in job.options.items() if described[key].kind == "path_flag" and value
    ]
    if not wanted:
        return {}
    named = job.key if identity is None else f"{job.key}|{identity.machine_id}|{identity.build_id}"
    digest = hashlib.sha1(named.encode()).hexdigest()[:16]
    return {key: directory / job.experiment / f"{digest}{FILE_SUFFIXES[key]}" for key in wanted}


def job_command(
    job: Job, binary: Path, files_dir: Path, identity: Identity | None = None
) -> list[str]:
    """The exact argv run for a job."""
    files = job_files(job, files_dir, identity)
    return command(binary, job.options, job.seed, files, job.benchmark)


@dataclass
class Summary:
    """What a run did."""

    ran: int = 0
    skipped: int = 0
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class _Outcome:
    result: dict[str, Any] | None
    failure_kind: str = ""
    message: str = ""
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""


class Runner:
    """Runs jobs against one smrbench binary into one store."""

    def __init__(
        self,
        store: Store,
        binary: Path,
        progress: Progress,
        timeout: float | None = None,
        files_dir: Path | None = None,
        identity: Identity | None = None,
        reuse_stored: bool = False,
    ) -> None:
        """``identity``: the machine and binary results are stored under; a job is skipped
        when its result is stored under the same identity, or, with ``reuse_stored``, under
        any."""
        self.identity = identity
        self.reuse_stored = reuse_stored
        self.store = store
        self.binary = binary
        self.progress = progress
        self.timeout = timeout
        self.files_dir = files_dir or store.path.parent / "files"

    def run(self, jobs: list[Job]) -> Summary:
        """Runs every job not already stored. KeyboardInterrupt propagates after the trial in
        flight is killed; everything finished before it is committed."""
        summary = Summary()
        started = time.monotonic()
        stored = set()
        if jobs:
            scope = None if self.reuse_stored else self.identity
            stored = self.store.stored_keys(jobs[0].experiment, scope)
        todo = [job for job in jobs if job.key not in stored]
        summary.skipped = len(jobs) - len(todo)
        if summary.skipped:
            self.progress.note(
                f"{summary.skipped} of {len(jobs)} trials already stored; running {len(todo)}"
            )
        self.progress.start(len(todo))
        try:
            for job in todo:
                self.progress.begin(job)
                self._run_one(job, summary)
        finally:
            self.progress.close()
            summary.seconds = time.monotonic() - started
        return summary

    def _run_one(self, job: Job, summary: Summary) -> None:
        files = job_files(job, self.files_dir, self.identity)
        for path in files.values():
            path.parent.mkdir(parents=True, exist_ok=True)
        argv = command(self.binary, job.options, job.seed, files, job.benchmark)
        timeout = self.timeout if self.timeout is not None else default_timeout(job)
        begun = time.monotonic()
        outcome = _execute(argv, timeout, list(files.values()))
        elapsed = time.monotonic() - begun
        summary.ran += 1
        if outcome.result is not None:
            present = {kind: path for kind, path in files.items() if path.is_file()}
            for kind in sorted(set(files) - set(present)):
                self.progress.note(f"note: smrbench wrote no {kind} file for {job.label}")
            self.store.add_run(
                job.experiment,
                job.key,
                job.trial,
                outcome.result,
                argv,
                elapsed_s=elapsed,
                files=present,
                identity=self.identity,
            )
            self.progress.done(job, True, _detail(job, outcome.result), elapsed)
            return
        failure = Failure(
            job.experiment,
            job.key,
            job.trial,
            outcome.failure_kind,
            outcome.message,
            outcome.exit_code,
            outcome.stderr,
            outcome.stdout,
            argv,
            self.identity,
        )
        self.store.add_failure(failure)
        summary.failures.append(failure)
        self.progress.done(job, False, outcome.message, elapsed)


def _detail(job: Job, result: dict[str, Any]) -> str:
    """What a progress line says of a stored result."""
    if job.benchmark == "layout":
        return "layout measured"
    throughput = float(result.get("throughput_ops_per_s") or 0.0)
    if job.benchmark == "threadtest":
        return f"{throughput / 1e6:.2f} M malloc/free pairs/s"
    if job.benchmark == "stamp":
        return f"{float(result.get('seconds') or 0.0):.3f} s, {throughput / 1e3:.1f} K tasks/s"
    return format_throughput(throughput)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP stop a run as Ctrl-C does (smrlab.errors.Stopped): the trial in
    flight is stopped with its process group, every finished trial is stored. smrbench runs in
    a session of its own (so that a terminal's Ctrl-C reaches smrlab alone), so without this a
    signal that ends smrlab would leave it running. A signal the parent set to be ignored (as
    nohup does) stays ignored."""

    def stop(signum: int, _frame: object) -> None:
        raise Stopped(signum)

    previous = {}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) != signal.SIG_IGN:
            previous[signum] = signal.signal(signum, stop)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


# How long a stopped trial has to leave before it is killed: smrbench removes a half-written
# output file when SIGTERM ends it, which SIGKILL would not let it do.
STOP_GRACE_S = 2.0


def _kill_group(process: subprocess.Popen, outputs: list[Path]) -> None:
    """Ends the trial and anything it started (smrbench may fork): SIGTERM, then SIGKILL if
    it has not gone within STOP_GRACE_S, after which the temporary files it was writing
    (bench/output_file.hpp names them) are removed."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=STOP_GRACE_S)
        return
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for output in outputs:
        for partial in output.parent.glob(f".{output.name}.smrbench-{process.pid}-*.tmp"):
            partial.unlink(missing_ok=True)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Holds SIGINT, SIGTERM and SIGHUP back while a trial is being ended, so that a second
    signal (a second Ctrl-C, systemd's SIGTERM then SIGHUP) cannot cut the cleanup short and
    leave smrbench running in its own session; they are delivered, and stop the run, after."""
    stops = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def _signals_held() -> Iterator[list[int]]:
    """While a trial's process is being created, SIGINT, SIGTERM and SIGHUP are only recorded
    (in the list it yields), for the caller to raise again once it holds the process. One
    raised inside Popen after its fork would leave smrbench running in a session of its own,
    with nobody holding its pid. Handlers, not a blocked signal mask: the child would inherit
    the mask and ignore the SIGTERM that stops it, while a caught signal is reset to its
    default at exec. An ignored signal stays ignored; outside the main thread (where no
    handler can be set) nothing changes."""
    caught: list[int] = []
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(signum) not in (signal.SIG_IGN, None):
                previous[signum] = signal.signal(signum, lambda s, _f: caught.append(s))
    try:
        yield caught
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _start(argv: list[str], outputs: list[Path]) -> subprocess.Popen:
    """Starts one trial's smrbench in a session of its own; a stop signal that arrives
    meanwhile acts once the process is returned, never before (_signals_held)."""
    with _signals_held() as caught:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    for signum in caught[:1]:
        # Raised where the caller's `process` is assigned and its cleanup runs.
        _raise_after_start(process, outputs, signum)
    return process


def _raise_after_start(process: subprocess.Popen, outputs: list[Path], signum: int) -> None:
    """Stops the process just started, then acts on the signal as it would have."""
    with _signals_deferred():
        _kill_group(process, outputs)
        process.communicate()
    signal.raise_signal(signum)


def _execute(argv: list[str], timeout: float, outputs: list[Path]) -> _Outcome:
    """Runs one trial and classifies what happened."""
    process: subprocess.Popen | None = None
    try:
        try:
            process = _start(argv, outputs)
        except OSError as error:
            return _Outcome(None, "exit", f"cannot start smrbench: {error.strerror}")
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        assert process is not None
        with _signals_deferred():
            _kill_group(process, outputs)
            stdout, stderr = process.communicate()
        return _Outcome(None, "timeout", f"timed out after {timeout:g} s", None, stdout, stderr)
    except BaseException:  # KeyboardInterrupt, Stopped: leave no orphan running
        if process is not None:
            with _signals_deferred():
                _kill_group(process, outputs)
                process.communicate()
        raise
    code = process.returncode
    result: dict[str, Any] | None = None
    try:
        parsed = json.loads(stdout)
        result = parsed if isinstance(parsed, dict) else None
    except json.JSONDecodeError:
        result = None

    def failed(kind: str, message: str) -> _Outcome:
        return _Outcome(None, kind, message, code, stdout, stderr)

    if result is not None and result.get("validated") is False:
        errors = [
            trial.get("validation", {}).get("error", "") for trial in result.get("trials", [])
        ] + [result.get("validation", {}).get("error", "")]  # layout's, which has no trials
        detail = next((error for error in errors if error), "validation failed")
        return failed("not_validated", f"not validated: {detail}")
    if code == 2:
        return failed("bad_input", f"smrbench rejected the input: {_last_line(stderr)}")
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return failed("exit", f"killed by {name}" + _suffix(_last_line(stderr)))
    if code != 0:
        return failed("exit", f"exit status {code}" + _suffix(_last_line(stderr)))
    if result is None:
        return failed("invalid_json", "stdout is not one JSON object" + _suffix(_last_line(stderr)))
    if result.get("smrbench_version") != 1:
        return failed(
            "invalid_json", f"unknown smrbench_version {result.get('smrbench_version')!r}"
        )
    if "validated" not in result:
        return failed("invalid_json", "JSON has no 'validated' field")
    return _Outcome(result, stdout=stdout, stderr=stderr, exit_code=code)


def _suffix(line: str) -> str:
    return f": {line}" if line else ""
