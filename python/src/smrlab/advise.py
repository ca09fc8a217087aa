"""``smrlab advise``: a short, targeted grid on this machine for the user's workload, within a
time budget, and the recommendation it supports (smrlab.advice_rank).

The grid is cut down before anything runs and again after a first look:

1. **Candidates.** Every scheme the compatibility table accepts on the structure (smrbench's
   ``--list --json``), or those the workload names; refused ones are listed with the table's
   reason and never run.
2. **Stall probe** (``stalls = true``): one trial of every candidate with a stalled thread,
   which measures the garbage each holds. A scheme whose garbage is unbounded under a stall is
   out whatever its speed, so its throughput is never screened.
3. **Screen**: 3 trials of every remaining candidate, batch free, the first allocator.
4. **Refine**: the fastest few that meet the workload's requirements, with every free policy
   and every allocator the workload lists, 5 trials each.

Trials run trial-major (every configuration's trial 1, then every trial 2), so configurations
compared are measured seconds apart, and ranked by their rounds' ratios. The trial length is the
longest of 1, 0.5 and 0.25 s with which the probe and the screen fit half the budget; the refine
stage is sized to what is left, with the per-trial cost the screen measured. Each stage is an
experiment of the store, ``advise-NAME-STAGE-DIGEST`` (the digest of its grid and options): a
second advice that asks for the same stage reuses its trials (same machine and smrbench build),
and ``smrlab report`` shows the trials behind each advice.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from smrlab.advice_rank import bounded_garbage, collect, exclusion, rank
from smrlab.advice_workload import Workload, load_workload, resolve
from smrlab.errors import UsageError
from smrlab.grid import machine_cpus, parse_experiment, parse_threads

DEFAULT_BUDGET_S = 180.0
DURATIONS = (1.0, 0.5, 0.25)  # trial lengths, longest first: fixed steps keep results reusable
SCREEN_TRIALS = 3
FINAL_TRIALS = 5
SCREEN_SHARE = 0.5  # of the budget, for the stall probe and the screen
REFINE_AT_MOST = 4  # reclaimers refined with every free policy and allocator
FIRST_OVERHEAD_S = 0.4  # a trial's cost beyond its duration until one is measured

# Which schemes to screen first when the budget cannot screen them all: those the studies
# found fastest or most robust in their families first, variants and slow baselines last.
PRIORITY = (
    "debra", "ebr", "nbrplus", "hyaline", "hp", "crystalline_l", "ibr", "qsbr", "hp_pp", "he",
    "token_passfirst", "nebr", "crystalline", "wfe", "nbr", "rcu", "qsbr_ibr", "hp_pop",
    "he_pop", "epoch_pop", "token_periodic", "token_naive", "urcu_memb", "urcu_qsbr", "lfrc",
)  # fmt: skip


@dataclass
class Stage:
    """One experiment run of an advice: what it asked for and what it took."""

    name: str
    trials: int = 0  # trials run (stored ones excluded)
    stored: int = 0  # trials already in the store
    seconds: float = 0.0


@dataclass
class Session:
    """What an advice run knows as it goes."""

    workload: Workload
    bench: Any
    db_path: Path
    budget: float
    cpus: int
    threads: int
    key_range: int
    duration: float = DURATIONS[0]
    overhead: float = FIRST_OVERHEAD_S
    started: float = field(default_factory=time.monotonic)
    stages: list[Stage] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    unmeasured: dict[str, str] = field(default_factory=dict)
    experiments: dict[str, str] = field(default_factory=dict)  # stage → experiment in the store
    notes: list[str] = field(default_factory=list)  # what the budget cut, for the caveats

    def left(self) -> float:
        return self.budget - (time.monotonic() - self.started)

    def trial_cost(self) -> float:
        return self.duration + self.overhead


def advise(path: Path, bench: Any, db_path: Path, budget: float = DEFAULT_BUDGET_S) -> dict:
    """Runs the advice for the workload file at ``path`` and returns it (JSON-ready); it is
    also stored in the store's advice table for ``smrlab report``."""
    from smrlab.store import Store

    workload, text = load_workload(path)
    workload = resolve(workload, bench.listing, path)
    cpus = machine_cpus()
    key_range = workload.key_range or int(bench.listing["default_key_range"][workload.ds])
    session = Session(
        workload, bench, db_path, budget, cpus, parse_threads(workload.threads, cpus), key_range
    )
    candidates = _candidates(workload, bench.listing)
    if not candidates:
        raise UsageError(f"{path}: no reclaimer this smrbench has is safe on {workload.ds}")
    bounded = bounded_garbage(bench.listing)
    screened = [r for r in candidates if bounded.get(r, False) or not workload.stalls]
    probed = candidates if workload.stalls else []
    screened = _fit_screen(session, screened, len(probed))
    if probed:
        _run_stage(session, "stall probe", {"reclaimer": probed}, stall=True, trials=1)
    survivors = _survivors(session, screened)
    if survivors:
        _run_stage(session, "screen", {"reclaimer": survivors}, stall=False, trials=SCREEN_TRIALS)
        _refine(session, survivors)
    advice = _advice(session, text)
    with Store(db_path) as store:
        store.record_advice(workload.name, text, json.dumps(advice))
    return advice


def _candidates(workload: Workload, listing: dict[str, Any]) -> list[str]:
    """The schemes to measure, in screening priority: safe on the structure, not the leak."""
    safe = [
        entry["reclaimer"]
        for entry in listing.get("combinations", [])
        if entry.get("ds") == workload.ds
        and entry.get("valid")
        and entry.get("safe", True)
        and entry["reclaimer"] != "none"
        and (workload.reclaimers is None or entry["reclaimer"] in workload.reclaimers)
    ]
    rank_of = {name: number for number, name in enumerate(PRIORITY)}
    return sorted(safe, key=lambda name: rank_of.get(name, len(PRIORITY)))


def _fit_screen(session: Session, screened: list[str], probes: int) -> list[str]:
    """Chooses the trial length, and the candidates the screen can afford at the shortest;
    raises UsageError when the budget cannot screen even two."""
    share = SCREEN_SHARE * session.budget
    for duration in DURATIONS:
        session.duration = duration
        if (len(screened) * SCREEN_TRIALS + probes) * session.trial_cost() <= share:
            return screened
    fit = math.floor((share / session.trial_cost() - probes) / SCREEN_TRIALS)
    if fit < min(2, len(screened)):
        need = (min(2, len(screened)) * SCREEN_TRIALS + probes) * session.trial_cost()
        raise UsageError(
            f"--budget {session.budget:g}: too small for this workload, which needs at least "
            f"{math.ceil(need / SCREEN_SHARE)} s to compare two candidates"
        )
    for name in screened[fit:]:
        session.unmeasured[name] = (
            f"not measured within the budget of {session.budget:g} s "
            f"(screening every candidate needs about {_full_budget(session, screened, probes)} s)"
        )
    return screened[:fit]


def _full_budget(session: Session, screened: list[str], probes: int) -> int:
    trials = len(screened) * SCREEN_TRIALS + probes
    return math.ceil(trials * session.trial_cost() / SCREEN_SHARE)


def _survivors(session: Session, screened: list[str]) -> list[str]:
    """The screened candidates the stall probe did not already rule out (garbage under a
    stall over the memory budget), by the rule the ranking applies."""
    if not session.workload.stalls:
        return screened
    listing = session.bench.listing
    probes = collect(_runs(session, "stall probe"), listing, session.workload.allocators[0])
    probed = {config.reclaimer: config for config in probes}
    bounded = bounded_garbage(listing)
    return [
        name
        for name in screened
        if name not in probed
        or not exclusion(probed[name], session.workload, bounded, session.duration)
    ]


def _refine(session: Session, survivors: list[str]) -> None:
    """Measures the fastest admissible survivors with every free policy and allocator, to
    FINAL_TRIALS trials each, as many as the budget left affords."""
    ranked = rank(
        replace(session.workload, latency_sensitive=False),  # leaders by throughput alone
        session.bench.listing,
        _runs(session, "stall probe") + _runs(session, "screen"),
        duration=session.duration,
        failures=session.failures,
    )["ranked"]
    leaders = list(dict.fromkeys(row["reclaimer"] for row in ranked))[:REFINE_AT_MOST]
    wanted = (list(session.bench.listing.get("free", ["batch"])), list(session.workload.allocators))
    frees, allocators = list(wanted[0]), list(wanted[1])
    while leaders:
        variants = len(frees) * len(allocators)
        trials = len(leaders) * variants * FINAL_TRIALS
        if trials * session.trial_cost() <= session.left():
            grid = {"reclaimer": leaders, "free": frees, "alloc": allocators}
            _run_stage(session, "refine", grid, stall=False, trials=FINAL_TRIALS)
            if (frees, allocators) != wanted:
                session.notes.append(
                    f"The budget refined free={','.join(frees)} with "
                    f"{', '.join(allocators)} only (asked: free={','.join(wanted[0])} with "
                    f"{', '.join(wanted[1])}); a larger --budget measures the rest."
                )
            return
        if len(allocators) > 1:
            allocators.pop()
        elif len(frees) > 1:
            frees.pop()
        elif len(leaders) > 1:
            leaders.pop()
        else:
            break
    session.notes.append(
        "The budget left no time to refine: the ranking is the screen's (3 rounds, batch free, "
        f"{session.workload.allocators[0]}); a larger --budget compares free policies and "
        "allocators."
    )


def _run_stage(
    session: Session,
    name: str,
    grid: dict[str, list],
    *,
    stall: bool,
    trials: int,
) -> None:
    from smrlab.cli import run_experiment

    workload = session.workload
    fixed: dict[str, Any] = {
        "ds": workload.ds,
        "key_range": session.key_range,
        "insert": workload.insert,
        "erase": workload.erase,
        "threads": session.threads,
        "stall": stall,
        "duration": session.duration,
        "trials": trials,
    }
    if "free" not in grid:
        fixed["free"] = "batch"
    if "alloc" not in grid:
        fixed["alloc"] = workload.allocators[0]
    description = f"smrlab advise {workload.name}: {name}"
    # A stage's trials pair round by round only with trials of the same run, so a stage is an
    # experiment of its own, named by what it measures: asked again, the same stage reuses its
    # stored trials whole, and a different one (another budget chose other candidates) cannot
    # mix its rounds with them.
    digest = hashlib.sha256(json.dumps([grid, fixed], sort_keys=True).encode()).hexdigest()
    slug = name.replace(" ", "_")
    session.experiments[name] = f"advise-{workload.name}-{slug}-{digest[:8]}"
    text = _experiment_text(session.experiments[name], description, grid, fixed)
    experiment = parse_experiment(text, Path(f"<advise {workload.name}>"))
    configurations = math.prod(len(values) for values in grid.values())
    print(
        f"smrlab advise: {name}: {configurations} configurations × {trials} trials of "
        f"{session.duration:g} s ({max(0.0, session.left()):.0f} s of the budget left)",
        file=sys.stderr,
    )
    summary = run_experiment(experiment, session.bench, session.db_path)
    session.stages.append(Stage(name, summary.ran, summary.skipped, summary.seconds))
    if summary.ran:
        session.overhead = max(0.0, summary.seconds / summary.ran - session.duration)
    for failure in summary.failures:
        reclaimer = json.loads(failure.config_key).get("reclaimer", "")
        session.failures.setdefault(reclaimer, failure.message)


def _experiment_text(name: str, description: str, grid: dict, fixed: dict) -> str:
    """An experiment file for one stage (stored as its definition: ``smrlab run`` takes it)."""
    lines = ["[experiment]", f"name = {json.dumps(name)}"]
    lines += [f"description = {json.dumps(description)}"]
    lines += ["", "[grid]", *(f"{key} = {json.dumps(values)}" for key, values in grid.items())]
    lines += ["", "[fixed]", *(f"{key} = {json.dumps(value)}" for key, value in fixed.items())]
    return "\n".join(lines) + "\n"


def _runs(session: Session, stage: str) -> list[dict[str, Any]]:
    """The stored trials of one stage of this advice (none if it did not run), on this
    machine with this build."""
    from smrlab.provenance import identity
    from smrlab.store import Store

    experiment = session.experiments.get(stage)
    if experiment is None or not session.db_path.exists():
        return []
    ident = identity(session.bench.path, session.bench.listing)
    with Store(session.db_path, write=False) as store:
        runs = store.runs(experiment)
    return [
        run
        for run in runs
        if run["machine_id"] == ident.machine_id and run["build_id"] == ident.build_id
    ]


def _advice(session: Session, text: str) -> dict[str, Any]:
    advice = rank(
        session.workload,
        session.bench.listing,
        _runs(session, "stall probe") + _runs(session, "screen"),
        _runs(session, "refine"),
        duration=session.duration,
        failures=session.failures,
        unmeasured=session.unmeasured,
    )
    machine = session.bench.listing.get("machine") or {}
    build = session.bench.listing.get("build") or {}
    return {
        "workload": session.workload.as_dict(),
        "workload_file": text,
        "machine": {
            "cpus": session.cpus,
            "cpu_model": machine.get("cpu_model"),
            "cores": machine.get("cores"),
        },
        "build": {"commit": build.get("commit"), "build_type": build.get("build_type")},
        "key_range": session.key_range,
        "threads": session.threads,
        "trial_seconds": session.duration,
        "budget_seconds": session.budget,
        "elapsed_seconds": time.monotonic() - session.started,
        "stages": [stage.__dict__ for stage in session.stages],
        "experiments": list(session.experiments.values()),
        **advice,
        "caveats": caveats(session, advice),
    }


def caveats(session: Session, advice: dict[str, Any]) -> list[str]:
    """What the measurement cannot say, as the papers teach it."""
    workload, out = session.workload, list(session.notes)
    chosen = advice.get("recommendation")
    out.append(
        f"Measured on {session.cpus} CPUs. On a machine with many more cores the shared epoch "
        "and batch frees cost more: Hyaline and Crystalline overtook EBR only at 64 to 144 "
        "threads in their papers (Nikolaev and Ravindran, PLDI 2021; DISC 2021). Run the "
        "advice on the machine that will run the code."
    )
    out.append(
        f"Allocators measured: {', '.join(workload.allocators)}. The allocator changes the "
        "ranking: batch freeing is cheap or harmful depending on it (Kim, Brown and Singh, "
        "PPoPP 2024), and it can reverse a comparison (Baldassin, Borin and Araujo, TRANSACT "
        "2014)."
    )
    if session.threads > session.cpus:
        out.append(
            f"{session.threads} threads on {session.cpus} CPUs: a thread preempted inside an "
            "operation holds back epoch reclamation as a stall does (Hart et al., JPDC 2007)."
        )
    if chosen is not None:
        traits = next(
            (r for r in session.bench.listing["reclaimers"] if r["name"] == chosen["reclaimer"]),
            {},
        )
        if traits.get("uses_signals") or traits.get("pings"):
            out.append(
                f"{chosen['reclaimer']} interrupts threads with POSIX signals: every thread "
                "that uses the structure must leave the signal unblocked, and a read phase "
                "must not hold locks or allocate (docs/library.md)."
            )
        if not workload.stalls and not traits.get("garbage_bounded"):
            out.append(
                f"{chosen['reclaimer']}'s garbage is unbounded if a thread stalls inside an "
                "operation; if that can happen, advise again with stalls = true."
            )
    out.append(
        f"Trials of {session.duration:g} s: effects that build over minutes (fragmentation, "
        "RSS growth) are not measured."
    )
    return out
