"""Is B faster than A beyond the noise? Two sets of results matched configuration by
configuration, with a bootstrap confidence interval on each ratio and a control's noise band.

The two sides are two values of one option within an experiment (``--by free=batch,amortized``),
two experiments, or one experiment in two stores. Every other option must match: a pair is one
configuration measured on both sides, each side with its trials.

For each pair the ratio is median(B) / median(A) over the trials, and its interval the
percentile bootstrap: both sides resampled with replacement, the ratio of the resamples'
medians, 10,000 times, the middle 95 %. With few trials the bootstrap of a median is coarse but
errs wide (with 5 trials per side and log-normal noise, 97 % of nominal-95 % intervals cover the
true ratio in tests/python/test_compare.py's simulation; 92 % with 3).

An interval that excludes 1.0 can still be noise when the machine drifts between the sides, as
a shared machine does. So a control measures what "no difference" looks like: a configuration
in which the compared option cannot matter (``reclaimer=none`` for batch vs amortized free:
``none`` frees nothing), matched on everything else. Its interval is the noise band; a pair is
called faster or slower only when its interval excludes 1.0 and its ratio lies outside the band.
Only runs made with ``interleave = true`` (the two sides alternating trial by trial) compare
fairly on a shared machine; smrlab says when a comparison's runs were not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from smrlab.errors import UsageError
from smrlab.grid import parse_experiment, same_value

RESAMPLES = 10_000
CONFIDENCE = 0.95
MIN_TRIALS = 3  # fewer per side and a bootstrap interval is meaningless

# What can be compared: the store column, and whether more is better.
METRICS = {
    "throughput": ("throughput", True),
    "memory": ("peak_rss_bytes", False),
    "garbage": ("garbage_peak", False),
    "time_per_op": ("exec_time_per_op_ns", False),
}


@dataclass(frozen=True)
class Interval:
    """A ratio B/A of medians and its bootstrap confidence interval."""

    ratio: float
    low: float
    high: float

    def covers(self, value: float) -> bool:
        return self.low <= value <= self.high


@dataclass
class Pair:
    """One configuration measured on both sides."""

    config: dict[str, Any]  # the matched options (no trial, no compared option)
    a: list[float]
    b: list[float]
    interval: Interval | None = None  # None: fewer than MIN_TRIALS on a side
    band: Interval | None = None  # the control's interval (None: no control matched)
    verdict: str = ""


@dataclass
class Comparison:
    """Every matched pair, and what was left unmatched."""

    label_a: str
    label_b: str
    metric: str
    control: tuple[str, Any] | None
    pairs: list[Pair]
    only_a: int  # configurations measured on side A alone
    only_b: int
    interleaved: bool | None  # None: unknown (the experiment file did not say)

    def varying(self) -> list[str]:
        """The matched options whose values differ between pairs (what a table shows)."""
        keys = sorted({key for pair in self.pairs for key in pair.config})
        return [
            key
            for key in keys
            if len({json.dumps(pair.config.get(key)) for pair in self.pairs}) > 1
        ]


def bootstrap_ratio(
    a: list[float],
    b: list[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Interval:
    """median(b) / median(a) with its percentile-bootstrap interval (reproducible: seeded)."""
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    from_a = first[rng.integers(0, len(first), (resamples, len(first)))]
    from_b = second[rng.integers(0, len(second), (resamples, len(second)))]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.median(from_b, axis=1) / np.median(from_a, axis=1)
    return _percentiles(float(np.median(second) / np.median(first)), ratios, confidence)


def _percentiles(ratio: float, resampled: np.ndarray, confidence: float) -> Interval:
    """``ratio`` with the middle ``confidence`` of its bootstrap resamples."""
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(resampled, [tail, 1.0 - tail])
    return Interval(ratio, float(low), float(high))


def bootstrap_paired_ratio(
    a: list[float],
    b: list[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Interval:
    """The median of the pairs' ratios b[i] / a[i] with its percentile-bootstrap interval (the
    pairs resampled whole), for two sides measured round by round: a round's drift moves both
    sides of its pair, and the ratio cancels it where the unpaired medians would not."""
    if len(a) != len(b):
        raise ValueError(f"paired sides differ in length: {len(a)} and {len(b)}")
    ratios = np.asarray(b, dtype=float) / np.asarray(a, dtype=float)
    rng = np.random.default_rng(seed)
    medians = np.median(ratios[rng.integers(0, len(ratios), (resamples, len(ratios)))], axis=1)
    return _percentiles(float(np.median(ratios)), medians, confidence)


def _config(run: dict[str, Any], drop: str | None, by_machine: bool) -> str:
    options = {k: v for k, v in run["options"].items() if k not in ("trial", drop)}
    if by_machine:  # a machine's trials are never pooled with another's
        options["machine"] = run.get("machine_id", "")
    return json.dumps(options, sort_keys=True)


def _values(
    runs: list[dict[str, Any]], column: str, drop: str | None, by_machine: bool
) -> dict[str, list[float]]:
    values: dict[str, list[float]] = {}
    for run in runs:
        if run.get(column) is not None:
            key = _config(run, drop, by_machine)
            values.setdefault(key, []).append(float(run[column]))
    return values


def compare(
    runs_a: list[dict[str, Any]],
    runs_b: list[dict[str, Any]],
    *,
    label_a: str,
    label_b: str,
    metric: str = "throughput",
    drop: str | None = None,
    control: tuple[str, str] | None = None,
    interleaved: bool | None = None,
    confidence: float = CONFIDENCE,
    by_machine: bool = True,
) -> Comparison:
    """Matches two sides' runs on every option but the trial (and ``drop``, the option whose
    values are the sides) and, with ``by_machine``, on the machine (not when the sides are
    two machines' stores), and computes each pair's interval, band and verdict."""
    if metric not in METRICS:
        raise UsageError(f"--metric: {metric!r} is not one of {', '.join(METRICS)}")
    column, higher_is_better = METRICS[metric]
    side_a = _values(runs_a, column, drop, by_machine)
    side_b = _values(runs_b, column, drop, by_machine)
    if not side_a or not side_b:
        empty = label_a if not side_a else label_b
        raise UsageError(f"no stored {metric} results for {empty}")
    matched = [key for key in side_a if key in side_b]
    if not matched:
        raise UsageError(
            f"no configuration was measured on both sides ({label_a}: {len(side_a)}, "
            f"{label_b}: {len(side_b)}); they differ in more than the compared option"
        )
    pairs = [Pair(json.loads(key), side_a[key], side_b[key]) for key in matched]
    for number, pair in enumerate(pairs):
        if min(len(pair.a), len(pair.b)) >= MIN_TRIALS:
            pair.interval = bootstrap_ratio(pair.a, pair.b, confidence=confidence, seed=number)
    found = _resolve_control(pairs, control)
    for pair in pairs:
        pair.band = _band(pairs, pair, found)
        pair.verdict = _verdict(pair, higher_is_better)
    return Comparison(
        label_a,
        label_b,
        metric,
        found,
        pairs,
        only_a=len(side_a) - len(matched),
        only_b=len(side_b) - len(matched),
        interleaved=interleaved,
    )


def _resolve_control(pairs: list[Pair], control: tuple[str, str] | None) -> tuple[str, Any] | None:
    """The control as a stored (key, value): the one asked for (UsageError when no pair has
    it), else reclaimer=none when some pair ran it, else none."""
    if control is not None:
        key, text = control
        for pair in pairs:
            if key in pair.config and same_value(pair.config[key], text):
                return key, pair.config[key]
        raise UsageError(f"--control {key}={text}: no configuration measured on both sides has it")
    if any(pair.config.get("reclaimer") == "none" for pair in pairs):
        return "reclaimer", "none"
    return None


def _band(pairs: list[Pair], pair: Pair, control: tuple[str, Any] | None) -> Interval | None:
    """The interval of the control configuration matching ``pair`` in every other option."""
    if control is None:
        return None
    key, value = control
    wanted = {**pair.config, key: value}
    for other in pairs:
        if other.config == wanted:
            return other.interval
    return None


def _verdict(pair: Pair, higher_is_better: bool) -> str:
    interval = pair.interval
    if interval is None:
        return f"too few trials (fewer than {MIN_TRIALS} on a side)"
    if pair.band is not None and pair.band is interval:
        return "control"
    if interval.covers(1.0):
        return "no difference shown"
    if pair.band is not None and pair.band.covers(interval.ratio):
        return "within the control's noise"
    better = (interval.ratio > 1.0) == higher_is_better
    return "better" if better else "worse"


@dataclass(frozen=True)
class Sides:
    """Two sides' runs as the command line chose them."""

    runs_a: list[dict[str, Any]]
    runs_b: list[dict[str, Any]]
    label_a: str
    label_b: str
    drop: str | None = None  # the option whose values are the sides
    control: tuple[str, str] | None = None  # the experiment's [compare] control
    interleaved: bool | None = None
    by_machine: bool = True  # False: the sides are two stores, perhaps two machines


def by_option(
    runs: list[dict[str, Any]], key: str, values: list[str], spec: Any | None = None
) -> Sides:
    """The sides ``key=A`` and ``key=B`` of one experiment's runs; ``spec`` is the experiment's
    [compare] table (grid.CompareSpec), which says whether its runs interleaved the sides."""
    if len(values) != 2:
        raise UsageError(f"--by {key}=...: give exactly two values (the sides), not {len(values)}")
    present = [run for run in runs if key in run["options"]]
    if not present:
        raise UsageError(f"--by {key}: no stored run of this experiment sets {key}")
    sides = []
    for text in values:
        chosen = [run for run in present if same_value(run["options"][key], text)]
        if not chosen:
            stored = sorted({json.dumps(run["options"][key]) for run in present})
            raise UsageError(f"--by {key}: no run has {key}={text} (stored: {', '.join(stored)})")
        sides.append(chosen)
    interleaved = None
    if spec is not None:
        interleaved = spec.interleave and spec.by == key
    control = spec.control if spec is not None and spec.by == key else None
    return Sides(
        sides[0], sides[1], f"{key}={values[0]}", f"{key}={values[1]}", key, control, interleaved
    )


def experiment_spec(store: Any, name: str) -> Any | None:
    """The [compare] table of the experiment file as last run (grid.CompareSpec), or None."""
    definition = store.experiment_info(name).get("definition")
    if not definition:
        return None
    try:
        return parse_experiment(definition).compare
    except UsageError:
        return None  # a file written for another smrlab: its [compare] table is not known


def compare_sides(
    sides: Sides, *, metric: str = "throughput", control: tuple[str, str] | None = None
) -> Comparison:
    """``compare`` of the chosen sides; ``control`` overrides the experiment's."""
    return compare(
        sides.runs_a,
        sides.runs_b,
        label_a=sides.label_a,
        label_b=sides.label_b,
        metric=metric,
        drop=sides.drop,
        control=control or sides.control,
        interleaved=sides.interleaved,
        by_machine=sides.by_machine,
    )
