"""Turns a validated experiment into the jobs to run on a given smrbench build.

The grid is checked against what the binary reports (``--list --json``, ``--help``): a name it
does not know is an error, or — with ``skip_unavailable = true`` in ``[experiment]`` — a note,
so experiment files can list a paper's full set of reclaimers and run whatever the current build
has. Data-structure × reclaimer pairs that smrbench declares invalid are dropped with a note:
a product grid naturally contains some.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from smrlab.errors import UsageError
from smrlab.grid import (
    Experiment,
    Job,
    Options,
    check_value,
    expand,
    jobs,
    leave_out_unread_tunings,
)
from smrlab.options import DEFAULT_RECLAIMER, NAMED_OPTIONS, OPTIONS_BY_BENCHMARK
from smrlab.smrbench import Smrbench, command


@dataclass
class Plan:
    """The jobs of an experiment and the notes explaining what was left out."""

    jobs: list[Job]
    notes: list[str] = field(default_factory=list)


def make_plan(experiment: Experiment, bench: Smrbench | None, cpus: int | None = None) -> Plan:
    """Expands the experiment; checks it against ``bench`` unless that is None (dry run
    without a build), in which case nothing is filtered."""
    configurations = expand(experiment, cpus)
    notes: list[str] = []
    if experiment.benchmark == "set":
        described = bench.options_for("set") if bench is not None else None
        configurations, notes = leave_out_unread_tunings(
            configurations, described or OPTIONS_BY_BENCHMARK["set"], DEFAULT_RECLAIMER
        )
    if bench is not None:
        configurations = _check_against(experiment, configurations, bench, notes)
    if not configurations:
        raise UsageError(
            f"experiment {experiment.name}: nothing to run with this smrbench"
            + (f" ({'; '.join(notes)})" if notes else "")
        )
    return Plan(jobs(experiment, configurations), notes)


def _check_against(
    experiment: Experiment, configurations: list[Options], bench: Smrbench, notes: list[str]
) -> list[Options]:
    used = {key for options in configurations for key in options}
    benchmark = experiment.benchmark
    for key in sorted(used):
        option = OPTIONS_BY_BENCHMARK[benchmark][key]
        if option.passed and not bench.has_option(key, benchmark):
            where = "" if benchmark == "set" else f" {benchmark}"
            raise UsageError(
                f"experiment {experiment.name} sets {key}, but smrbench{where} at "
                f"{bench.path} has no {option.flag} option yet"
            )

    _check_values_against(experiment, configurations, bench)

    unavailable: dict[str, set[str]] = {}
    for key in NAMED_OPTIONS:
        wanted = {str(options[key]) for options in configurations if key in options}
        if not wanted:
            continue
        known = bench.names(key)
        missing = sorted(wanted - set(known))
        if not missing:
            continue
        if not experiment.skip_unavailable:
            raise UsageError(
                f"experiment {experiment.name}: {key} {', '.join(missing)} not in this smrbench "
                f"(available: {', '.join(known)}); set skip_unavailable = true in [experiment] "
                f"to run the rest"
            )
        unavailable[key] = set(missing)
        notes.append(f"skipping {key} {', '.join(missing)}: not in this smrbench")

    kept: list[Options] = []
    invalid: set[tuple[str, str]] = set()
    for options in configurations:
        if any(str(options.get(key)) in names for key, names in unavailable.items()):
            continue
        ds = str(options.get("ds", "dgt_bst"))
        reclaimer = str(options.get("reclaimer", "debra"))
        if (
            benchmark == "set"
            and not options.get("allow_unsafe")
            and not bench.valid_combination(ds, reclaimer)
        ):
            invalid.add((ds, reclaimer))
            continue
        kept.append(options)
    if invalid:
        pairs = ", ".join(f"{ds}×{reclaimer}" for ds, reclaimer in sorted(invalid))
        notes.append(f"skipping invalid combinations (smrbench --list): {pairs}")
    _check_each_configuration(experiment, kept, bench)
    return kept


def _check_each_configuration(
    experiment: Experiment, configurations: list[Options], bench: Smrbench
) -> None:
    """Has smrbench check every configuration's command line (``--check``, which runs nothing)
    before any trial runs, so that a combination it refuses (``restart_from_head`` with a
    structure that has no restart policy, a queue given a contains share, a signal NBR cannot
    take, more threads than ``ulimit -u`` allows) refuses the grid at once, rather than each of
    its trials failing in turn. The rules stay smrbench's own; a build without ``--check`` is
    not asked."""
    if not bench.can_check:
        return
    argvs = {
        tuple(command(bench.path, options, int(options.get("seed", 1)), None, experiment.benchmark))
        for options in configurations
    }
    workers = min(len(argvs), os.cpu_count() or 2) or 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        answers = list(pool.map(lambda argv: (argv, bench.refusal(list(argv))), sorted(argvs)))
    refused = [(argv, reason) for argv, reason in answers if reason is not None]
    if not refused:
        return
    reasons = sorted({reason for _, reason in refused})
    others = f" (and {len(reasons) - 1} other reasons)" if len(reasons) > 1 else ""
    raise UsageError(
        f"experiment {experiment.name}: smrbench refuses {len(refused)} of {len(argvs)} "
        f"configurations, so nothing was run: {reasons[0]}{others}"
    )


def _check_values_against(
    experiment: Experiment, configurations: list[Options], bench: Smrbench
) -> None:
    """Checks every value once more against the binary's own description of its options, which
    differs from smrlab's snapshot when the binary is not the checkout's own build."""
    described = bench.options_for(experiment.benchmark)
    if described is None:
        return
    checked: set[tuple[str, str]] = set()
    for options in configurations:
        for key, value in options.items():
            if key not in described or (key, repr(value)) in checked:
                continue
            checked.add((key, repr(value)))
            check_value(
                described[key],
                value,
                f"experiment {experiment.name}: {key} (smrbench at {bench.path})",
                UsageError,
            )
