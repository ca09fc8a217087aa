"""Experiment files: load, validate and expand a TOML grid into smrbench jobs.

An experiment is the product of its ``[grid]`` lists plus the ``[fixed]`` options, repeated for
each trial. Those tables are the experiment's *quick* size (minutes on a laptop); optional
``[sizes.NAME]`` tables (e.g. ``[sizes.paper]``) name other sizes, chosen with
``smrlab run --size NAME``: each key of the size table replaces that option wherever it was (a
list goes to the grid, a single value to the fixed options).

Everything a user can get wrong in the file is checked here, before any process runs, so a typo
costs one clear line and exit status 2 rather than half a night of benchmarks.
"""

from __future__ import annotations

import difflib
import itertools
import json
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smrlab.errors import UsageError
from smrlab.options import (
    BENCHMARKS,
    DEFAULT_SEED,
    OPTIONS_BY_BENCHMARK,
    Option,
    not_a_finite_number,
    not_an_integer,
    not_non_negative,
    not_one_of,
    out_of_range,
)

Value = str | int | float | bool
Options = dict[str, Value]

_TABLES = ("experiment", "grid", "fixed", "sizes", "compare")
_COMPARE_KEYS = ("by", "control", "interleave")
QUICK = "quick"  # the size the [grid] and [fixed] tables describe
_EXPERIMENT_KEYS = ("name", "description", "skip_unavailable", "benchmark")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_RELATIVE_THREADS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*x\s*$")
_WORKLOAD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def machine_cpus() -> int:
    """CPUs this process may run on: what relative thread counts ("2x") multiply.

    The affinity mask is used rather than os.cpu_count() because in a container or under
    taskset the process can use fewer CPUs than the machine has; both agree on a plain machine.
    """
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Experiment:
    """A validated experiment file (thread counts still possibly relative)."""

    name: str
    description: str
    path: Path
    source: str
    grid: dict[str, list[Value]]
    fixed: Options
    trials: int
    skip_unavailable: bool = False
    size: str = QUICK
    sizes: tuple[str, ...] = (QUICK,)
    benchmark: str = "set"  # the smrbench command: set, threadtest or layout
    compare: CompareSpec | None = None


@dataclass(frozen=True)
class CompareSpec:
    """An experiment's [compare] table: its two sides are the two values of grid option
    ``by``; ``control`` (KEY=VALUE) is the configuration whose ratio is the noise band
    (smrlab.compare); ``interleave`` runs each configuration's two sides one after the other
    in every trial round, in alternating order."""

    by: str
    sides: tuple[Value, Value]
    control: tuple[str, str] | None = None
    interleave: bool = False


@dataclass(frozen=True)
class Job:
    """One smrbench process: an option set and a trial index."""

    experiment: str
    options: Options
    trial: int
    trials: int
    label: str = field(compare=False, default="")
    benchmark: str = "set"

    @property
    def key(self) -> str:
        """Canonical config key: sorted JSON of the options plus the trial index.

        It identifies a result in the store, so re-running an experiment skips what is stored.
        """
        return config_key(self.options, self.trial)

    @property
    def seed(self) -> int:
        """Seed for this trial: the base seed plus the trial index (trials must differ)."""
        return int(self.options.get("seed", DEFAULT_SEED)) + self.trial


def config_key(options: Options, trial: int) -> str:
    """The canonical JSON key of an option set and trial (see Job.key)."""
    return json.dumps({**options, "trial": trial}, sort_keys=True, separators=(",", ":"))


def load_experiment(path: str | Path, size: str = QUICK) -> Experiment:
    """Reads and validates an experiment file at one of its sizes (every size is validated);
    raises UsageError naming the problem."""
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot read experiment file {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise UsageError(
            f"experiment file {path} is not UTF-8 text (byte {error.start}), as TOML must be"
        ) from None
    return parse_experiment(source, path, size)


def parse_experiment(source: str, path: Path = Path("<string>"), size: str = QUICK) -> Experiment:
    """Validates experiment TOML text (see load_experiment)."""
    experiment = _parse_experiment(source, path, size)
    for other in experiment.sizes:  # a typo in [sizes.paper] is found by a quick run too
        if other != size:
            _parse_experiment(source, path, other)
    return experiment


def _apply_size(document: dict[str, Any], size: str, fail: Any) -> tuple[str, ...]:
    """Checks the [sizes] tables; merges the chosen one into [grid]/[fixed] (in place).

    Returns the names of every size, quick first."""
    sizes = document.pop("sizes", {})
    for name, table in sizes.items():
        if not _NAME_RE.match(name) or name == QUICK:
            raise fail(
                f"size name {name!r} must be letters, digits, '_', '-' or '.' and not "
                f"{QUICK!r} (the [grid] and [fixed] tables are the quick size)"
            )
        if not isinstance(table, dict):
            raise fail(f"[sizes.{name}] must be a table of options")
    names = (QUICK, *sizes)
    if size not in names:
        raise fail(f"no size {size!r} (sizes of this experiment: {', '.join(names)})")
    if size == QUICK:
        return names
    grid = document.setdefault("grid", {})
    fixed = document.setdefault("fixed", {})
    for key, value in sizes[size].items():
        replaced = {key} | ({"insert", "erase"} if key == "workload" else set())
        if key in ("insert", "erase"):
            replaced.add("workload")
        for name in replaced:
            grid.pop(name, None)
            fixed.pop(name, None)
        (grid if isinstance(value, list) else fixed)[key] = value
    return names


def _parse_experiment(source: str, path: Path, size: str) -> Experiment:
    """Validates one size of experiment TOML text."""

    where = f"{path}: " if size == QUICK else f"{path}: size {size}: "

    def fail(message: str) -> UsageError:
        return UsageError(where + message)

    try:
        document = tomllib.loads(source)
    except tomllib.TOMLDecodeError as error:
        raise fail(f"invalid TOML: {error}") from None

    for key, value in document.items():
        if key not in _TABLES:
            raise fail(
                f"unknown table [{key}] (expected [experiment], [grid], [fixed], [compare] "
                f"and [sizes.NAME])"
            )
        if not isinstance(value, dict):
            raise fail(f"'{key}' must be a table: [{key}]")
    if "experiment" not in document:
        raise fail("missing [experiment] table with a name")
    sizes = _apply_size(document, size, fail)

    header = document["experiment"]
    for key in header:
        if key not in _EXPERIMENT_KEYS:
            raise fail(
                f"unknown key '{key}' in [experiment]{_suggest(key, _EXPERIMENT_KEYS)}"
                f" (expected {', '.join(_EXPERIMENT_KEYS)})"
            )
    name = header.get("name")
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise fail("[experiment] name must be a string of letters, digits, '_', '-' or '.'")
    description = header.get("description", "")
    if not isinstance(description, str):
        raise fail("[experiment] description must be a string")
    skip_unavailable = header.get("skip_unavailable", False)
    if not isinstance(skip_unavailable, bool):
        raise fail("[experiment] skip_unavailable must be true or false")
    benchmark = header.get("benchmark", "set")
    if benchmark not in BENCHMARKS:
        raise fail(f"[experiment] benchmark: {not_one_of(benchmark, BENCHMARKS)}")
    options_of = OPTIONS_BY_BENCHMARK[benchmark]

    grid: dict[str, list[Value]] = {}
    for key, raw in document.get("grid", {}).items():
        option = _option(key, "grid", fail, options_of, benchmark)
        values = raw if isinstance(raw, list) else [raw]
        if not values:
            raise fail(f"[grid] {key} is an empty list")
        grid[key] = _dedupe([check_value(option, value, f"[grid] {key}", fail) for value in values])

    fixed: Options = {}
    for key, value in document.get("fixed", {}).items():
        option = _option(key, "fixed", fail, options_of, benchmark)
        if isinstance(value, list):
            raise fail(f"[fixed] {key} is a list; options that vary belong in [grid]")
        if key in grid:
            raise fail(f"'{key}' is in both [grid] and [fixed]")
        fixed[key] = check_value(option, value, f"[fixed] {key}", fail)

    present = set(grid) | set(fixed)
    if "workload" in present and present & {"insert", "erase"}:
        raise fail("use either workload or insert/erase, not both")
    trials_values = grid.pop("trials", None)
    if trials_values is not None and len(trials_values) != 1:
        raise fail("trials must be a single number (it repeats every configuration)")
    trials = int(trials_values[0] if trials_values else fixed.pop("trials", 1))
    fixed.pop("trials", None)

    experiment = Experiment(
        name=name,
        description=description.strip(),
        path=path,
        source=source,
        grid=grid,
        fixed=fixed,
        trials=trials,
        skip_unavailable=skip_unavailable,
        size=size,
        sizes=sizes,
        benchmark=benchmark,
        compare=_parse_compare(document.get("compare"), grid, fixed, fail),
    )
    if benchmark != "set":
        return experiment
    for options in expand(experiment, cpus=1):  # percentages are checked once, up front
        _check_percentages(options, fail)
    return experiment


def _parse_compare(
    table: dict[str, Any] | None, grid: dict[str, list[Value]], fixed: Options, fail: Any
) -> CompareSpec | None:
    """The [compare] table, checked against the grid it compares within."""
    if table is None:
        return None
    for key in table:
        if key not in _COMPARE_KEYS:
            raise fail(
                f"unknown key '{key}' in [compare]{_suggest(key, _COMPARE_KEYS)}"
                f" (expected {', '.join(_COMPARE_KEYS)})"
            )
    by = table.get("by")
    if not isinstance(by, str) or by not in grid or len(grid[by]) != 2:
        raise fail("[compare] by must name a [grid] option with exactly two values (the sides)")
    control = table.get("control")
    parsed = None
    if control is not None:
        key, _, value = str(control).partition("=")
        values = [str(v) for v in grid.get(key, [])] + ([str(fixed[key])] if key in fixed else [])
        if not isinstance(control, str) or not value or key == by or value not in values:
            raise fail(
                "[compare] control must be KEY=VALUE with a value the grid runs, of an option "
                f"other than {by} (e.g. reclaimer=none), not {control!r}"
            )
        parsed = (key, value)
    interleave = table.get("interleave", False)
    if not isinstance(interleave, bool):
        raise fail("[compare] interleave must be true or false")
    first, second = grid[by]
    return CompareSpec(by, (first, second), parsed, interleave)


def expand(experiment: Experiment, cpus: int | None = None) -> list[Options]:
    """The grid's configurations: the product of its lists merged with [fixed].

    Relative thread counts are resolved against ``cpus`` (default: this machine), the
    ``workload`` shorthand becomes insert/erase, and configurations that become identical
    after that (e.g. "1x" and 2 on two CPUs) appear once. Order follows the file.
    """
    cpus = machine_cpus() if cpus is None else cpus
    keys = list(experiment.grid)
    configurations: list[Options] = []
    seen: set[str] = set()
    for values in itertools.product(*(experiment.grid[key] for key in keys)):
        options = {**experiment.fixed, **dict(zip(keys, values, strict=True))}
        options = _resolve(options, cpus)
        signature = json.dumps(options, sort_keys=True)
        if signature not in seen:
            seen.add(signature)
            configurations.append(options)
    return configurations


def leave_out_unread_tunings(
    configurations: list[Options], options: dict[str, Option], default_reclaimer: str
) -> tuple[list[Options], list[str]]:
    """Gives each reclaimer's tunings only to the runs of the reclaimers that read them.

    smrbench refuses a tuning its reclaimer would ignore (``--check-every`` is debra's), while
    an experiment may fix the settings of several schemes at once (Hart et al.'s quiescent
    states for qsbr, advance attempts for ebr, scan threshold for hp, in one file). A tuning
    is left out of the other reclaimers' configurations, which keep what else they set; those
    that become identical (a tuning's values as a grid axis) appear once. Returns the
    configurations and one note per tuning left out, naming the runs it was left out of.
    """
    kept: list[Options] = []
    seen: set[str] = set()
    left_out: dict[str, set[str]] = {}
    for configuration in configurations:
        reclaimer = str(configuration.get("reclaimer", default_reclaimer))
        trimmed: Options = {}
        for key, value in configuration.items():
            readers = options[key].reclaimers if key in options else None
            if readers is not None and reclaimer not in readers:
                left_out.setdefault(key, set()).add(reclaimer)
            else:
                trimmed[key] = value
        signature = json.dumps(trimmed, sort_keys=True)
        if signature not in seen:
            seen.add(signature)
            kept.append(trimmed)
    notes = [
        f"{key} is read only by {', '.join(options[key].reclaimers or ())}: left out of the "
        f"runs of {', '.join(sorted(reclaimers))}"
        for key, reclaimers in sorted(left_out.items())
    ]
    return kept, notes


def jobs(experiment: Experiment, configurations: list[Options]) -> list[Job]:
    """One job per configuration and trial, trial-major.

    Running every configuration's trial 0 before any trial 1 gives a complete (if noisier)
    picture early when a long run is interrupted, and spreads slow drifts of the machine
    across all configurations instead of concentrating them in one.
    """
    varying = [key for key, values in experiment.grid.items() if len(values) > 1]
    if "workload" in varying:
        varying[varying.index("workload")] = "insert"
    spec = experiment.compare
    if spec is not None and spec.interleave:
        configurations = _sides_adjacent(configurations, spec)
    return [
        Job(
            experiment.name,
            options,
            trial,
            experiment.trials,
            label=describe(options, varying, trial, experiment.trials),
            benchmark=experiment.benchmark,
        )
        for trial in range(experiment.trials)
        for options in _alternate(configurations, spec, trial)
    ]


def _sides_adjacent(configurations: list[Options], spec: CompareSpec) -> list[Options]:
    """The configurations reordered so that each one's other side follows it at once."""
    order: list[Options] = []
    placed: set[int] = set()
    for index, options in enumerate(configurations):
        if index in placed:
            continue
        placed.add(index)
        order.append(options)
        for other, candidate in enumerate(configurations):
            rest = {k: v for k, v in candidate.items() if k != spec.by}
            if other not in placed and rest == {k: v for k, v in options.items() if k != spec.by}:
                placed.add(other)
                order.append(candidate)
    return order


def _alternate(
    configurations: list[Options], spec: CompareSpec | None, trial: int
) -> list[Options]:
    """One trial round's order: on odd rounds of an interleaved comparison each adjacent pair
    runs in the other order, so neither side always runs first (after the other side's
    allocations, or on a machine that just warmed up)."""
    if spec is None or not spec.interleave or trial % 2 == 0:
        return configurations
    swapped = list(configurations)
    for i in range(0, len(swapped) - 1):
        same = {k: v for k, v in swapped[i].items() if k != spec.by} == {
            k: v for k, v in swapped[i + 1].items() if k != spec.by
        }
        if same and swapped[i].get(spec.by) == spec.sides[0]:
            swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
    return swapped


def describe(options: Options, keys: list[str], trial: int, trials: int) -> str:
    """A short human label of a job: the values of the options that vary, and the trial."""
    parts = []
    for key in keys:
        if key not in options:
            continue
        value = options[key]
        if key in {"ds", "reclaimer", "free", "alloc"}:
            parts.append(str(value))
        elif key == "insert":
            parts.append(f"{value}/{options.get('erase', 50)}")
        elif key == "threads":
            parts.append(f"{value} thr")
        elif isinstance(value, bool):
            parts.append(key if value else f"no {key}")
        else:
            parts.append(f"{key}={value}")
    parts.append(f"trial {trial + 1}/{trials}")
    return " ".join(parts)


def parse_threads(value: Value, cpus: int) -> int:
    """A thread count: an integer, or "Nx" meaning N × cpus (at least 1)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _RELATIVE_THREADS_RE.match(str(value))
    if not match:
        raise ValueError(f"not a thread count: {value!r}")
    return max(1, round(float(match.group(1)) * cpus))


def _resolve(options: Options, cpus: int) -> Options:
    resolved = dict(options)
    if "threads" in resolved:
        resolved["threads"] = parse_threads(resolved["threads"], cpus)
    if "workload" in resolved:
        insert, erase = _parse_workload(str(resolved.pop("workload")))
        resolved["insert"], resolved["erase"] = insert, erase
    return resolved


def _parse_workload(value: str) -> tuple[int, int]:
    match = _WORKLOAD_RE.match(value)
    if not match:
        raise ValueError(f"not a workload: {value!r}")
    return int(match.group(1)), int(match.group(2))


def _check_percentages(options: Options, fail: Any) -> None:
    insert = int(options.get("insert", 50))
    erase = int(options.get("erase", 50))
    if insert + erase > 100:
        raise fail(f"insert {insert} + erase {erase} is over 100 percent")


def _option(key: str, table: str, fail: Any, options: dict[str, Option], benchmark: str) -> Option:
    option = options.get(key)
    if option is None:
        hint = _suggest(key.replace("-", "_"), list(options))
        if benchmark != "set" and key in OPTIONS_BY_BENCHMARK["set"]:
            hint = f" (an option of the set benchmark; {benchmark} takes {', '.join(options)})"
        raise fail(f"unknown option '{key}' in [{table}]{hint}")
    return option


def _suggest(key: str, candidates: Any) -> str:
    close = difflib.get_close_matches(key, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _dedupe(values: list[Value]) -> list[Value]:
    unique: list[Value] = []
    for value in values:
        if not any(type(value) is type(other) and value == other for other in unique):
            unique.append(value)
    return unique


def check_value(option: Option, value: Any, where: str, fail: Any) -> Value:
    """Checks one value against its option's kind and range; returns it (normalized). ``fail``
    makes the exception to raise from a message."""
    kind = option.kind
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if kind in {"bool", "path_flag"}:
        if not isinstance(value, bool):
            raise fail(f"{where}: expected true or false, got {value!r}")
        return value
    if kind == "str":
        if not isinstance(value, str) or not value:
            raise fail(f"{where}: expected a name (string), got {value!r}")
        if option.key == "workload":
            try:
                insert, erase = _parse_workload(value)
            except ValueError:
                raise fail(
                    f'{where}: expected "INSERT/ERASE" percentages such as "50/50", got {value!r}'
                ) from None
            if insert + erase > 100:
                raise fail(f"{where}: {value!r} is over 100 percent")
            return value
        if option.choices and value not in option.choices:
            raise fail(f"{where}: {not_one_of(value, option.choices)}")
        return value
    if kind == "threads":
        if is_int and value >= 1:
            _check_range(option, value, where, fail)
            return value
        if isinstance(value, str) and _RELATIVE_THREADS_RE.match(value):
            if float(_RELATIVE_THREADS_RE.match(value).group(1)) <= 0:  # type: ignore[union-attr]
                raise fail(f"{where}: {value!r} must be a positive multiple")
            return value.strip().replace(" ", "")
        raise fail(
            f"{where}: {value!r} is not a thread count (a positive integer, or a "
            f'multiple of the CPUs such as "1x" or "2x")'
        )
    if kind == "prefill":
        if value in ("auto", "none") or (is_int and value >= 0):
            return value
        raise fail(f'{where}: expected "auto", "none" or a number of keys, got {value!r}')
    if kind in ("int", "float") and isinstance(value, str) and _looks_numeric(value):
        raise fail(f"{where}: {value!r} is a string (in quotes); write the number without them")
    if kind == "int":
        if not is_int:
            raise fail(f"{where}: {not_an_integer(value)}")
        if value < 0 and option.minimum is not None and option.minimum >= 0:
            raise fail(f"{where}: {not_non_negative(value)}")
    elif kind == "float" and (not (is_int or isinstance(value, float)) or not math.isfinite(value)):
        raise fail(f"{where}: {not_a_finite_number(value)}")
    _check_range(option, value, where, fail)
    return value


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_range(option: Option, value: int | float, where: str, fail: Any) -> None:
    low = -math.inf if option.minimum is None else option.minimum
    high = math.inf if option.maximum is None else option.maximum
    if not low <= value <= high:
        raise fail(f"{where}: {out_of_range(value, low, high)}")


def parse_assignment(text: str, what: str) -> tuple[str, list[str]]:
    """``KEY=V1[,V2...]`` as (KEY, [V1, V2...]); UsageError naming ``what`` otherwise."""
    key, sep, values = text.partition("=")
    if not sep or not key.strip() or not values.strip():
        raise UsageError(f"{what}: expected KEY=VALUE[,VALUE], got {text!r}")
    return key.strip(), [value.strip() for value in values.split(",")]


def same_value(value: Any, text: str) -> bool:
    """Whether a stored option value is the one written on the command line."""
    if isinstance(value, bool):
        return text.lower() == str(value).lower()
    if isinstance(value, int | float):
        try:
            return float(text) == float(value)
        except ValueError:
            return False
    return str(value) == text


def select(jobs: list[Job], only: list[str], exclude: list[str]) -> list[Job]:
    """The jobs ``--only KEY=V[,V]`` keeps (every --only must match) and no ``--exclude``
    drops; UsageError for a key no job sets or a value no job has, so a typo never silently
    selects nothing (or everything)."""
    selectable = [_with_workload(job) for job in jobs]
    chosen = list(selectable)
    for flag, assignments in (("--only", only), ("--exclude", exclude)):
        for text in assignments:
            key, values = parse_assignment(text, flag)
            seen = [job.options[key] for job in selectable if key in job.options]
            if not seen:
                keys = sorted({k for job in selectable for k in job.options})
                raise UsageError(f"{flag} {text}: no configuration sets {key} ({', '.join(keys)})")
            for value in values:
                if not any(same_value(option, value) for option in seen):
                    known = ", ".join(sorted({str(option) for option in seen}))
                    raise UsageError(f"{flag} {text}: no configuration has {key}={value} ({known})")
            keep = flag == "--only"
            chosen = [
                job
                for job in chosen
                if (key in job.options and any(same_value(job.options[key], v) for v in values))
                == keep
            ]
    if not chosen:
        raise UsageError("--only and --exclude leave no configuration to run")
    return [job.original for job in chosen]


@dataclass(frozen=True)
class _Selectable:
    """A job as --only and --exclude see it: its options plus ``workload`` ("I/E"), the name
    an experiment file gives the insert and erase shares."""

    original: Job
    options: Options


def _with_workload(job: Job) -> _Selectable:
    options = dict(job.options)
    if "insert" in options and "erase" in options:
        options["workload"] = f"{options['insert']}/{options['erase']}"
    return _Selectable(job, options)
