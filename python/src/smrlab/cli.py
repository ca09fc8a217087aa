"""The ``smrlab`` command: run, reproduce, advise, plot, timeline, report, compare, export,
merge.

Bad input of any kind is one line on stderr and exit status 2 (like smrbench); failed trials are
exit status 1; a run interrupted by Ctrl-C is 130 (SIGTERM 143, SIGHUP 129), stops the trial in
flight and can be resumed by running it again.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import signal
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from smrlab import __version__
from smrlab.errors import UsageError

DEFAULT_DB = Path("results/smrlab.db")
REPRODUCE_DB = Path("results/reproduce.db")
REPRODUCE_OUT = Path("results/reproduce")


def _default_db() -> Path:
    from smrlab.smrbench import repo_root

    return repo_root() / DEFAULT_DB


# The longest per-trial limit --timeout takes: a week. Beyond it a limit means "none", which is
# what leaving the option out gives (60 + 20 × duration); and Python's waits overflow near 1e9 s.
MAX_TIMEOUT_S = 7 * 24 * 3600.0


MAX_BUDGET_S = 24 * 3600.0  # the longest `advise --budget`: a day


def _seconds_up_to(limit: float, named: str) -> Callable[[str], float]:
    """An argparse type: a number of seconds above 0 and at most ``limit`` (``named``)."""

    def seconds(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(value) or not 0 < value <= limit:
            raise argparse.ArgumentTypeError(
                f"must be a number of seconds above 0 and at most {limit:g} ({named}): {text!r}"
            )
        return value

    return seconds


_timeout = _seconds_up_to(MAX_TIMEOUT_S, "a week")
_budget = _seconds_up_to(MAX_BUDGET_S, "a day")


def _path(text: str) -> Path:
    """A file or directory argument: an empty one would mean the current directory."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path")
    return Path(text)


def _milliseconds(text: str) -> float:
    """A point in a trial's timeline: a finite number of milliseconds (negative reaches into
    the events that began just before the measured interval)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or abs(value) > MAX_TIMEOUT_S * 1e3:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of milliseconds, at most a week either way: {text!r}"
        )
    return value


class _Parser(argparse.ArgumentParser):
    """Bad arguments are one line on stderr, as all bad input is (argparse adds the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="smrlab",
        description="Run smrbench experiment grids, store the results in "
        "SQLite, and draw figures, timeline graphs and an HTML report.",
    )
    parser.add_argument("--version", action="version", version=f"smrlab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="run an experiment file (resumes: skips stored trials)",
        description="Expand an experiment's grid and run one smrbench "
        "process per trial, storing each result as it completes.",
    )
    run.add_argument("experiment", type=_path, help="experiment file (TOML)")
    run.add_argument("--db", type=_path, help=f"result store (default: {DEFAULT_DB} in the repo)")
    run.add_argument(
        "--dry-run", action="store_true", help="print the commands that would run; run nothing"
    )
    run.add_argument(
        "--size",
        default="quick",
        metavar="NAME",
        help="experiment size: quick (default: the [grid] and [fixed] tables, "
        "minutes) or a [sizes.NAME] table of the file, e.g. paper",
    )
    run.add_argument(
        "--timeout",
        type=_timeout,
        metavar="S",
        help="per-trial limit in seconds (default: 60 + 20 × duration)",
    )
    run.add_argument(
        "--smrbench",
        metavar="PATH",
        help="smrbench binary (default: $SMRBENCH, else build/release/bench/smrbench)",
    )
    run.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="KEY=V[,V]",
        help="run only the configurations with one of these values of KEY (repeatable: all "
        "must hold), e.g. --only reclaimer=debra,qsbr --only threads=2",
    )
    run.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="KEY=V[,V]",
        help="leave out the configurations with one of these values of KEY (repeatable)",
    )
    run.add_argument(
        "--reuse-stored",
        action="store_true",
        help="skip a configuration stored by any smrbench binary or machine (default: only "
        "one stored by this binary on this machine is skipped)",
    )

    reproduce = commands.add_parser(
        "reproduce",
        help="run every experiment docs/reproductions.md shows, timed, into one store",
        description="Run the experiment files that the page's section headings name, in the "
        "page's order, at one size, into one store; write summary.md and summary.json (each "
        "experiment's wall time, trials and load at its start, the binary's commit), then the "
        "store's figures and report. Resumes: trials this binary already stored are skipped.",
    )
    reproduce.add_argument(
        "--page", type=_path, help="the page (default: docs/reproductions.md in the repo)"
    )
    reproduce.add_argument(
        "--experiments",
        type=_path,
        metavar="DIR",
        help="where the page's experiment files are (default: experiments/ in the repo)",
    )
    reproduce.add_argument(
        "--db", type=_path, help=f"result store (default: {REPRODUCE_DB} in the repo)"
    )
    reproduce.add_argument(
        "--out", type=_path, help=f"summary, figures and report (default: {REPRODUCE_OUT})"
    )
    reproduce.add_argument(
        "--size",
        default="quick",
        metavar="NAME",
        help="experiment size: quick (default) or a [sizes.NAME] table; an experiment "
        "without it is left out and said so",
    )
    reproduce.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME[,NAME]",
        help="run only these experiments (file names without .toml; repeatable)",
    )
    reproduce.add_argument(
        "--list",
        action="store_true",
        help="print the page's sections and what they run; run nothing",
    )
    reproduce.add_argument(
        "--timeout",
        type=_timeout,
        metavar="S",
        help="per-trial limit in seconds (default: 60 + 20 × duration)",
    )
    reproduce.add_argument(
        "--smrbench",
        metavar="PATH",
        help="smrbench binary (default: $SMRBENCH, else build/release/bench/smrbench)",
    )

    plot = commands.add_parser(
        "plot",
        help="draw the figures of the stored results",
        description="Draw PNG and SVG figures from the result store.",
    )
    plot.add_argument("--db", type=_path, help=f"result store (default: {DEFAULT_DB} in the repo)")
    plot.add_argument("--out", type=_path, help="output directory (default: results/plots)")
    plot.add_argument("--experiment", metavar="NAME", help="only this experiment")

    timeline = commands.add_parser(
        "timeline",
        help="draw a timeline graph from a smrbench --timeline file",
        description="Draw the timeline graph of a window of a trial: one row per thread, boxes "
        "for free events, dots for epoch changes (also projected in a strip at the bottom).",
    )
    timeline.add_argument("file", type=_path, help="timeline file (smrbench --timeline)")
    timeline.add_argument("--out", type=_path, help="PNG to write (default: FILE.png)")
    timeline.add_argument("--start-ms", type=_milliseconds, metavar="A", help="window start (ms)")
    timeline.add_argument("--end-ms", type=_milliseconds, metavar="B", help="window end (ms)")
    timeline.add_argument(
        "--threads", metavar="LIST", help="threads to show, e.g. 0-19 or 0,2,4-7 (default: all)"
    )
    timeline.add_argument(
        "--garbage-series",
        type=_path,
        metavar="FILE",
        help="also draw garbage per epoch below (smrbench --garbage-series)",
    )

    report = commands.add_parser(
        "report",
        help="write one self-contained HTML report",
        description="Write a static HTML page with every figure of the store, the table of "
        "runs and an interactive viewer for each timeline file.",
    )
    report.add_argument(
        "--db", type=_path, help=f"result store (default: {DEFAULT_DB} in the repo)"
    )
    report.add_argument("--out", type=_path, help="output directory (default: results/report)")
    report.add_argument("--experiment", metavar="NAME", help="only this experiment")
    report.add_argument(
        "--timeline",
        type=_path,
        nargs="+",
        default=[],
        metavar="FILE",
        help="timeline files to include as interactive viewers",
    )
    compare = commands.add_parser(
        "compare",
        help="is B faster than A beyond the noise? ratios with confidence intervals",
        description="Match two sets of results configuration by configuration and print each "
        "ratio of medians B/A with a 95%% bootstrap interval, against a control's noise band. "
        "The sides: two values of one option (--by), two experiments (--against-experiment), "
        "or two stores (--against-db); by default the experiment's [compare] table.",
    )
    compare.add_argument(
        "--db", type=_path, help=f"result store (default: {DEFAULT_DB} in the repo)"
    )
    compare.add_argument(
        "--experiment", metavar="NAME", help="the experiment (default: the store's only one)"
    )
    compare.add_argument(
        "--by",
        metavar="KEY=A,B",
        help="the sides are two values of one option, e.g. free=batch,amortized",
    )
    compare.add_argument("--against-db", type=_path, metavar="PATH", help="side B's store")
    compare.add_argument("--against-experiment", metavar="NAME", help="side B's experiment")
    compare.add_argument(
        "--control",
        metavar="KEY=VALUE",
        help="the configuration whose ratio is the noise band (default: reclaimer=none when "
        "it ran, or the experiment's [compare] control)",
    )
    compare.add_argument(
        "--metric",
        default="throughput",
        choices=("throughput", "memory", "garbage", "time_per_op"),
        help="what is compared (default: throughput)",
    )
    compare.add_argument("--json", action="store_true", help="print JSON instead of a table")

    export = commands.add_parser(
        "export",
        help="write every stored trial as one row (CSV, JSON or Parquet)",
        description="One row per stored trial: provenance, the whole configuration, every "
        "statistic and the free-latency histogram bucket by bucket.",
    )
    export.add_argument(
        "--db", type=_path, help=f"result store (default: {DEFAULT_DB} in the repo)"
    )
    export.add_argument("--experiment", metavar="NAME", help="only this experiment")
    export.add_argument("--format", default="csv", choices=("csv", "json", "parquet"))
    export.add_argument("--out", type=_path, required=True, metavar="FILE", help="file to write")
    export.add_argument(
        "--every-build",
        action="store_true",
        help="every stored row (default: each configuration's newest result per machine, "
        "what the figures show)",
    )

    advise = commands.add_parser(
        "advise",
        help="measure which reclaimer, free policy and allocator suit a workload",
        description="Run a short grid on this machine for the workload a TOML file describes "
        "([workload]: ds, key_range, insert, erase, threads, stalls, memory_budget_nodes, "
        "latency_sensitive, allocators, reclaimers), within a time budget, and recommend a "
        "(reclaimer, free policy, allocator) with its evidence: the ranked candidates with "
        "confidence intervals, the ones indistinguishable within the noise, why each other "
        "one lost, and the caveats. Stored results of an earlier advice are reused; the "
        "advice is kept in the store for smrlab report. docs/advise.md explains the method.",
    )
    advise.add_argument("workload", type=_path, help="workload file (TOML, a [workload] table)")
    advise.add_argument(
        "--budget",
        type=_budget,
        default=180.0,
        metavar="S",
        help="seconds to spend measuring (default: 180)",
    )
    advise.add_argument(
        "--db", type=_path, help=f"result store (default: {DEFAULT_DB} in the repo)"
    )
    advise.add_argument(
        "--smrbench",
        metavar="PATH",
        help="smrbench binary (default: $SMRBENCH, else build/release/bench/smrbench)",
    )
    advise.add_argument("--json", action="store_true", help="print the advice as JSON")

    merge = commands.add_parser(
        "merge",
        help="join other stores into one, without duplicates, keeping their provenance",
        description="Add the results of other stores (other machines, other clones) to --db: "
        "rows already there are skipped, each machine's and build's rows stay apart.",
    )
    merge.add_argument("sources", type=_path, nargs="+", metavar="STORE", help="stores to add")
    merge.add_argument(
        "--db", type=_path, help=f"the store merged into (default: {DEFAULT_DB} in the repo)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    args = _parser().parse_args(argv)
    from smrlab.runner import stop_on_signals

    try:
        if args.command == "run":
            return _run(args)
        if args.command == "reproduce":
            return _reproduce(args)
        if args.command == "advise":
            return _advise(args)
        with stop_on_signals():  # SIGTERM and SIGHUP, like Ctrl-C, leave no half-written file
            if args.command == "plot":
                return _plot(args)
            if args.command == "timeline":
                return _timeline(args)
            if args.command == "compare":
                return _compare(args)
            if args.command == "export":
                return _export(args)
            if args.command == "merge":
                return _merge(args)
            return _report(args)
    except UsageError as error:
        print(f"smrlab: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:  # Ctrl-C, or SIGTERM/SIGHUP (errors.Stopped)
        signum = getattr(interrupt, "signum", signal.SIGINT)
        how = (
            "interrupted"
            if signum == signal.SIGINT
            else f"stopped by {signal.Signals(signum).name}"
        )
        print(
            f"\nsmrlab: {how}; every finished trial is stored, run the same command "
            "again to resume",
            file=sys.stderr,
        )
        return 128 + signum
    except BrokenPipeError:  # e.g. `smrlab run --dry-run x.toml | head`
        sys.stderr.close()
        return 0
    except sqlite3.DatabaseError as error:  # a store damaged while it was read
        print(f"smrlab: result store: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # an output that cannot be written, a file that cannot be read
        where = f": {error.filename}" if error.filename else ""
        print(f"smrlab: {error.strerror or error}{where}", file=sys.stderr)
        return 2


def _open_store(path: Path | None, *, must_exist: bool):
    from smrlab.store import Store

    path = path or _default_db()
    if must_exist:
        try:
            path.stat()
        except FileNotFoundError:
            raise UsageError(
                f"no result store at {path}; run an experiment first (smrlab run)"
            ) from None
        except OSError as error:  # a directory on the way we may not enter, say
            raise UsageError(f"cannot read the result store {path}: {error.strerror}") from None
    return Store(path, write=False)


def _run(args: argparse.Namespace) -> int:
    from smrlab.grid import load_experiment, select
    from smrlab.plan import make_plan
    from smrlab.provenance import identity
    from smrlab.runner import job_command
    from smrlab.smrbench import Smrbench, locate, require
    from smrlab.store import EmptyStoreError, Store

    experiment = load_experiment(args.experiment, args.size)
    title = _title(experiment)
    binary = locate(args.smrbench)
    db_path = args.db or _default_db()

    if args.dry_run:
        try:
            bench = Smrbench(require(binary))
        except UsageError as error:
            print(f"smrlab: note: {error}; names are not checked in this dry run", file=sys.stderr)
            bench = None
        plan = make_plan(experiment, bench)
        for note in plan.notes:
            print(f"smrlab: {note}", file=sys.stderr)
        plan.jobs[:] = select(plan.jobs, args.only, args.exclude)
        stored: set[str] = set()
        # Without the binary, whose results would be reused is unknown: assume any.
        ident = None if bench is None else identity(binary, bench.listing)
        scope = None if args.reuse_stored else ident
        # An empty file is a store yet to be made; anything else not a store is refused.
        if db_path.exists() and (not db_path.is_file() or db_path.stat().st_size > 0):
            try:
                with Store(db_path, write=False) as store:
                    stored = store.stored_keys(experiment.name, scope)
            except EmptyStoreError:
                pass  # made by a run that stored nothing yet: every command is still to run
        files_dir = db_path.parent / "files"
        todo = [job for job in plan.jobs if job.key not in stored]
        for job in todo:
            print(shlex.join(job_command(job, binary, files_dir, ident)))
        omitted = len(plan.jobs) - len(todo)
        print(
            f"smrlab: dry run of {title}: {len(todo)} commands"
            + (f" ({omitted} already stored in {db_path}, not shown)" if omitted else ""),
            file=sys.stderr,
        )
        return 0

    summary = run_experiment(
        experiment,
        Smrbench(require(binary)),
        db_path,
        timeout=args.timeout,
        only=args.only,
        exclude=args.exclude,
        reuse_stored=args.reuse_stored,
    )
    return 1 if summary.failures else 0


def _advise(args: argparse.Namespace) -> int:
    from smrlab.advice_view import text
    from smrlab.advise import advise
    from smrlab.smrbench import Smrbench, locate, require

    bench = Smrbench(require(locate(args.smrbench)))
    advice = advise(args.workload, bench, args.db or _default_db(), budget=args.budget)
    if args.json:
        print(json.dumps(advice, indent=2))
    else:
        print(text(advice), end="")
    failed = any(row["reason"].startswith("failed:") for row in advice["excluded"])
    return 1 if failed else 0


def _title(experiment: Any) -> str:
    return experiment.name + (f" (size {experiment.size})" if experiment.size != "quick" else "")


def run_experiment(
    experiment: Any,
    bench: Any,
    db_path: Path,
    *,
    timeout: float | None = None,
    only: Sequence[str] = (),
    exclude: Sequence[str] = (),
    reuse_stored: bool = False,
) -> Any:
    """Runs ``experiment``'s selected jobs with ``bench`` into the store at ``db_path`` (the
    store locked for the run), prints its summary line and any failures, and returns the
    runner's summary."""
    from smrlab.grid import select
    from smrlab.lock import exclusive_run
    from smrlab.plan import make_plan
    from smrlab.progress import format_duration, make_progress
    from smrlab.provenance import identity
    from smrlab.runner import Runner, stop_on_signals
    from smrlab.store import Store, check_store_file

    title = _title(experiment)
    plan = make_plan(experiment, bench)
    plan.jobs[:] = select(plan.jobs, list(only), list(exclude))
    progress = make_progress()
    for note in plan.notes:
        progress.note(f"smrlab: {note}")
    labels = {job.key: job.label for job in plan.jobs}
    check_store_file(db_path)  # before its lock file is made beside it
    with exclusive_run(db_path), stop_on_signals(), Store(db_path) as store:
        store.record_experiment(
            experiment.name, experiment.description, str(experiment.path), experiment.source
        )
        summary = Runner(
            store,
            bench.path,
            progress,
            timeout=timeout,
            identity=identity(bench.path, bench.listing),
            reuse_stored=reuse_stored,
        ).run(plan.jobs)
    print(
        f"smrlab: {title}: ran {summary.ran} trials in "
        f"{format_duration(summary.seconds)}, {summary.skipped} already stored, "
        f"{len(summary.failures)} failed; results in {db_path}",
        file=sys.stderr,
    )
    if summary.failures:
        print(
            f"smrlab: {len(summary.failures)} failed trials (kept in the failures table; "
            "a re-run retries them):",
            file=sys.stderr,
        )
        for failure in summary.failures:
            print(
                f"  FAILED {labels.get(failure.config_key, failure.config_key)}: {failure.message}",
                file=sys.stderr,
            )
            print(f"    command: {shlex.join(failure.command)}", file=sys.stderr)
            for line in failure.stderr.strip().splitlines()[-3:]:
                print(f"    stderr: {line}", file=sys.stderr)
    return summary


def _reproduce(args: argparse.Namespace) -> int:
    from smrlab import reproduce
    from smrlab.outputs import check_output_dir
    from smrlab.plots import plot_store
    from smrlab.progress import format_duration
    from smrlab.report import write_report
    from smrlab.smrbench import Smrbench, locate, repo_root, require

    root = repo_root()
    page = args.page or root / "docs" / "reproductions.md"
    sections = reproduce.read_page(page, args.experiments or root / "experiments")
    chosen = reproduce.choose(reproduce.experiments_in_order(sections), args.only)
    if args.list:
        for section in sections:
            names = [p.name for p in section.experiments] or list(section.scripts)
            kind = "" if section.experiments else " (a script: not run)"
            print(f"{section.title}: {', '.join(names)}{kind}")
        print(f"smrlab reproduce: {len(chosen)} experiment files to run", file=sys.stderr)
        return 0
    out = args.out or root / REPRODUCE_OUT
    check_output_dir(out)
    db = args.db or root / REPRODUCE_DB
    bench = Smrbench(require(locate(args.smrbench)))
    build = bench.listing.get("build", {})
    if build.get("dirty"):
        print(
            "smrlab reproduce: note: smrbench was built with uncommitted changes; the page asks "
            "for results of one commit",
            file=sys.stderr,
        )
    started = time.monotonic()
    outcomes = reproduce.run_all(
        chosen,
        size=args.size,
        bench=bench,
        db=db,
        timeout=args.timeout,
        run_experiment=run_experiment,
    )
    reproduce.write_summary(out, outcomes, sections, build, args.size)
    drawn = "no figures: nothing ran"
    if db.exists():
        with _open_store(db, must_exist=True) as store:
            written, notes = plot_store(store, out / "figures")
            report, report_notes = write_report(store, out / "report")
        for note in notes + report_notes:
            print(f"smrlab: {note}", file=sys.stderr)
        drawn = f"{len(written)} figure files, report {report}"
    failed = sum(o.failed for o in outcomes)
    left_out = sum(1 for o in outcomes if o.skipped_reason)
    print(
        f"smrlab reproduce: {len(outcomes) - left_out} experiments in "
        f"{format_duration(time.monotonic() - started)}, {left_out} left out, "
        f"{failed} failed trials; summary in {out / 'summary.md'}, {drawn}",
        file=sys.stderr,
    )
    return 1 if failed or left_out else 0


def _plot(args: argparse.Namespace) -> int:
    from smrlab.outputs import check_output_dir
    from smrlab.plots import plot_store
    from smrlab.smrbench import repo_root

    out = args.out or repo_root() / "results" / "plots"
    check_output_dir(out)
    with _open_store(args.db, must_exist=True) as store:
        written, notes = plot_store(store, out, experiment=args.experiment)
    for note in notes:
        print(f"smrlab: {note}", file=sys.stderr)
    for path in written:
        print(path)
    print(f"smrlab: wrote {len(written)} files in {out}", file=sys.stderr)
    return 0


def _timeline(args: argparse.Namespace) -> int:
    from smrlab.outputs import check_output_file, write_atomically
    from smrlab.timeline import read_garbage_series, read_timeline
    from smrlab.timeline_plot import parse_thread_list, plot_timeline

    out = args.out or args.file.with_suffix(args.file.suffix + ".png")
    if not os.access(args.file, os.R_OK):  # the input's own problem first, said by its reader
        read_timeline(args.file)
    check_output_file(out, "--out" if args.out else "the figure")
    timeline = read_timeline(args.file)
    threads = parse_thread_list(args.threads) if args.threads else None
    garbage = read_garbage_series(args.garbage_series) if args.garbage_series else None
    figure, notes = plot_timeline(
        timeline, start_ms=args.start_ms, end_ms=args.end_ms, threads=threads, garbage=garbage
    )
    kind = out.suffix[1:].lower() or "png"
    if kind not in figure.canvas.get_supported_filetypes():
        raise UsageError(f"--out {out}: matplotlib cannot write .{kind} files (use .png or .svg)")
    write_atomically(out, lambda temporary: figure.savefig(temporary, format=kind, dpi=150))
    for note in notes:
        print(f"smrlab: {note}", file=sys.stderr)
    print(out)
    return 0


def _report(args: argparse.Namespace) -> int:
    from smrlab.outputs import check_output_dir
    from smrlab.report import write_report
    from smrlab.smrbench import repo_root

    out = args.out or repo_root() / "results" / "report"
    check_output_dir(out)
    with _open_store(args.db, must_exist=True) as store:
        path, notes = write_report(store, out, timelines=args.timeline, experiment=args.experiment)
    for note in notes:
        print(f"smrlab: {note}", file=sys.stderr)
    print(path)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from smrlab import compare, compare_view
    from smrlab.grid import parse_assignment

    with _open_store(args.db, must_exist=True) as store:
        name = _only_experiment(store, args.experiment)
        runs = store.runs(name)
        spec = compare.experiment_spec(store, name)
        if args.against_db or args.against_experiment:
            other_name = args.against_experiment or name
            if args.against_db:
                with _open_store(args.against_db, must_exist=True) as other:
                    other_runs = other.runs(other_name)
            else:
                other_runs = store.runs(other_name)
            if not args.against_db and other_name == name:
                raise UsageError("--against-experiment names the experiment compared with itself")
            where = f" in {args.against_db}" if args.against_db else ""
            sides = compare.Sides(
                runs,
                other_runs,
                name,
                f"{other_name}{where}",
                interleaved=False,
                by_machine=not args.against_db,
            )
        elif args.by or spec is not None:
            key, values = (
                parse_assignment(args.by, "--by")
                if args.by
                else (spec.by, [str(value) for value in spec.sides])
            )
            sides = compare.by_option(runs, key, values, spec)
        else:
            raise UsageError(
                f"say what to compare in {name}: --by KEY=A,B, --against-experiment or "
                "--against-db (or give the experiment file a [compare] table)"
            )
    control = None
    if args.control:
        key, values = parse_assignment(args.control, "--control")
        control = (key, values[0])
    result = compare.compare_sides(sides, metric=args.metric, control=control)
    if args.json:
        print(json.dumps(compare_view.as_json(result), indent=2))
    else:
        print(compare_view.table(result))
    return 0


def _only_experiment(store: Any, name: str | None) -> str:
    """The experiment asked for, or the store's only one."""
    names = store.experiments()
    if name is not None:
        if name not in names:
            raise UsageError(
                f"no stored runs of experiment {name!r} in {store.path} "
                f"(stored: {', '.join(names) or 'none'})"
            )
        return name
    if len(names) != 1:
        raise UsageError(
            f"{store.path} holds {len(names)} experiments: name one with --experiment "
            f"({', '.join(names)})"
        )
    return names[0]


def _export(args: argparse.Namespace) -> int:
    from smrlab import export
    from smrlab.outputs import check_output_file

    check_output_file(args.out)
    with _open_store(args.db, must_exist=True) as store:
        if args.experiment is not None:
            _only_experiment(store, args.experiment)
        table = export.rows(store, args.experiment, args.every_build)
    if not table:
        raise UsageError("no stored results to export")
    export.write(table, args.out, args.format)
    print(f"smrlab: {len(table)} trials written to {args.out}", file=sys.stderr)
    return 0


def _merge(args: argparse.Namespace) -> int:
    from smrlab.lock import exclusive_run
    from smrlab.merge import merge
    from smrlab.store import Store, check_store_file

    db_path = args.db or _default_db()
    sources = []
    for path in args.sources:
        if path.resolve() == db_path.resolve():
            raise UsageError(f"{path} is the store merged into")
        sources.append(_open_store(path, must_exist=True))
    check_store_file(db_path)
    try:
        with exclusive_run(db_path), Store(db_path) as store:
            for path, source in zip(args.sources, sources, strict=True):
                done = merge(store, source)
                conflicts = (
                    f", {done.conflicts} kept as they were (this store holds another result "
                    f"of the same unrecorded machine and build)"
                    if done.conflicts
                    else ""
                )
                print(
                    f"smrlab: {path}: {done.added} runs added, {done.already} already here"
                    f"{conflicts}, {done.failures} failures, {done.files} files",
                    file=sys.stderr,
                )
                for missing in done.missing_files:
                    print(
                        f"smrlab: note: {path}: file not found, not copied: {missing}",
                        file=sys.stderr,
                    )
    finally:
        for source in sources:
            source.close()
    return 0
