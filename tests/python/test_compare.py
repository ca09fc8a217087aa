"""`smrlab compare`: the bootstrap interval's coverage, matching, the control's noise band and
verdicts, the [compare] table and interleaved runs, and the command end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from smrlab.cli import main
from smrlab.compare import bootstrap_paired_ratio, bootstrap_ratio, by_option, compare
from smrlab.errors import UsageError
from smrlab.grid import jobs, parse_experiment


def test_the_interval_covers_the_true_ratio_at_least_at_its_rate() -> None:
    # A/A with log-normal noise of 15 %, 5 trials a side: 95 % intervals must cover 1.0 in at
    # least 93 % of 300 repetitions (the bootstrap of a median errs wide: about 97 %).
    rng = np.random.default_rng(7)
    covered = 0
    for repetition in range(300):
        a, b = np.exp(rng.normal(0, 0.15, (2, 5)))
        covered += bootstrap_ratio(list(a), list(b), resamples=2000, seed=repetition).covers(1.0)
    assert covered / 300 >= 0.93


def test_a_real_difference_is_found() -> None:
    rng = np.random.default_rng(3)
    a = list(100 * np.exp(rng.normal(0, 0.03, 5)))
    b = list(130 * np.exp(rng.normal(0, 0.03, 5)))
    interval = bootstrap_ratio(a, b)
    assert 1.1 < interval.low <= interval.ratio <= interval.high < 1.6
    assert not interval.covers(1.0) and interval.ratio == pytest.approx(1.3, rel=0.05)
    assert bootstrap_ratio(a, b) == interval  # seeded: the same interval every time


def _runs(spec: dict[tuple[str, str], list[float]]) -> list[dict[str, Any]]:
    """Runs of (reclaimer, free) with the given throughputs, one per trial."""
    runs = []
    for (reclaimer, free), values in spec.items():
        for trial, value in enumerate(values):
            options = {"reclaimer": reclaimer, "free": free, "threads": 2, "trial": trial}
            runs.append({"options": options, "throughput": value, "peak_rss_bytes": 1 << 20})
    return runs


NOISY = [100.0, 104.0, 96.0, 101.0, 99.0]
RUNS = _runs(
    {
        ("none", "batch"): NOISY,
        ("none", "amortized"): [v * 1.03 for v in NOISY],  # what nothing changed looks like
        ("debra", "batch"): NOISY,
        ("debra", "amortized"): [v * 1.5 for v in NOISY],  # far beyond it
        ("qsbr", "batch"): NOISY,
        ("qsbr", "amortized"): [v * 1.02 for v in NOISY],  # inside the band
        ("ibr", "batch"): [100.0, 101.0],  # too few trials
        ("ibr", "amortized"): [100.0, 101.0],
        ("hp", "batch"): NOISY,  # measured on one side only
    }
)


def test_pairs_are_judged_against_the_controls_noise_band() -> None:
    sides = by_option(RUNS, "free", ["batch", "amortized"])
    result = compare(
        sides.runs_a, sides.runs_b, label_a=sides.label_a, label_b=sides.label_b, drop="free"
    )
    verdicts = {pair.config["reclaimer"]: pair.verdict for pair in result.pairs}
    assert result.control == ("reclaimer", "none")  # found without being asked
    assert verdicts["none"] == "control"
    assert verdicts["debra"] == "better"
    assert verdicts["qsbr"] in ("within the control's noise", "no difference shown")
    assert verdicts["ibr"].startswith("too few trials")
    assert (result.only_a, result.only_b) == (1, 0)
    debra = next(pair for pair in result.pairs if pair.config["reclaimer"] == "debra")
    assert debra.interval is not None and debra.interval.ratio == pytest.approx(1.5)
    assert debra.band is not None and debra.band.covers(1.03)
    # Memory: lower is better, and nothing differs.
    memory = compare(
        sides.runs_a, sides.runs_b, label_a="a", label_b="b", drop="free", metric="memory"
    )
    assert {pair.verdict for pair in memory.pairs} <= {"control", "no difference shown"} | {
        pair.verdict for pair in memory.pairs if pair.verdict.startswith("too few")
    }


def test_a_side_or_a_control_that_is_not_there_is_refused() -> None:
    with pytest.raises(UsageError, match=r"no run has free=eager \(stored: \"amortized\""):
        by_option(RUNS, "free", ["batch", "eager"])
    with pytest.raises(UsageError, match="exactly two values"):
        by_option(RUNS, "free", ["batch"])
    sides = by_option(RUNS, "free", ["batch", "amortized"])
    with pytest.raises(UsageError, match="--control reclaimer=wfe"):
        compare(
            sides.runs_a,
            sides.runs_b,
            label_a="a",
            label_b="b",
            drop="free",
            control=("reclaimer", "wfe"),
        )
    with pytest.raises(UsageError, match="differ in more than"):
        compare(sides.runs_a, _runs({("x", "y"): NOISY}), label_a="a", label_b="b")


EXPERIMENT = """
[experiment]
name = "pairs"
[grid]
reclaimer = ["none", "debra"]
free = ["batch", "amortized"]
[fixed]
ds = "dgt_bst"
alloc = "glibc"
threads = 2
key_range = 512
duration = 0.05
trials = 3
[compare]
by = "free"
control = "reclaimer=none"
interleave = true
"""


def test_interleaved_sides_run_one_after_the_other_in_alternating_order() -> None:
    experiment = parse_experiment(EXPERIMENT)
    assert experiment.compare is not None and experiment.compare.sides == ("batch", "amortized")
    order = [
        (job.trial, job.options["reclaimer"], job.options["free"])
        for job in jobs(
            experiment,
            [
                {"reclaimer": r, "free": f}
                for r in ("none", "debra")
                for f in ("batch", "amortized")
            ],
        )
    ]
    assert order[:8] == [
        (0, "none", "batch"),
        (0, "none", "amortized"),
        (0, "debra", "batch"),
        (0, "debra", "amortized"),
        (1, "none", "amortized"),
        (1, "none", "batch"),  # odd rounds: B first
        (1, "debra", "amortized"),
        (1, "debra", "batch"),
    ]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('by = "threads"', "by must name a \\[grid\\] option with exactly two values"),
        ('by = "free"\ncontrol = "reclaimer=hp"', "control must be KEY=VALUE"),
        ('by = "free"\ncontrol = "free=batch"', "control must be KEY=VALUE"),
        ('by = "free"\ninterleave = "yes"', "interleave must be true or false"),
        ('by = "free"\ninterlace = true', "unknown key 'interlace' in \\[compare\\]"),
    ],
)
def test_a_bad_compare_table_is_refused(table: str, message: str) -> None:
    source = EXPERIMENT[: EXPERIMENT.index("[compare]")] + "[compare]\n" + table + "\n"
    with pytest.raises(UsageError, match=message):
        parse_experiment(source)


def test_compare_end_to_end(tmp_path: Path, fake_smrbench: Path, capsys) -> None:
    experiment, db = tmp_path / "pairs.toml", tmp_path / "r.db"
    experiment.write_text(EXPERIMENT)
    assert main(["run", str(experiment), "--db", str(db), "--smrbench", str(fake_smrbench)]) == 0
    capsys.readouterr()
    # The experiment's [compare] table says what to compare.
    assert main(["compare", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("free=amortized (B) vs free=batch (A): throughput")
    assert "control reclaimer=none" in out and "interleave" not in out  # they were
    assert len([line for line in out.splitlines() if line.startswith(("none", "debra"))]) == 2
    assert main(["compare", "--db", str(db), "--by", "reclaimer=none,debra", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["a"], result["b"], result["interleaved"]) == (
        "reclaimer=none",
        "reclaimer=debra",
        False,
    )
    assert len(result["pairs"]) == 2 and result["control"] is None
    # The fake smrbench's throughput depends on the threads alone: B/A is 1.0 exactly.
    assert all(pair["interval"]["ratio"] == 1.0 for pair in result["pairs"])
    assert main(["compare", "--db", str(db), "--by", "free=batch"]) == 2
    assert "exactly two values" in capsys.readouterr().err
    assert main(["compare", "--db", str(db), "--against-experiment", "pairs"]) == 2
    assert "compared with itself" in capsys.readouterr().err
    # Two stores: the same experiment run again elsewhere.
    other = tmp_path / "other.db"
    assert main(["run", str(experiment), "--db", str(other), "--smrbench", str(fake_smrbench)]) == 0
    capsys.readouterr()
    assert main(["compare", "--db", str(db), "--against-db", str(other), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["pairs"]) == 4 and result["b"] == f"pairs in {other}"
    assert any("not run interleaved" in note for note in result["notes"])


def test_the_figures_include_the_comparison(tmp_path: Path, fake_smrbench: Path, capsys) -> None:
    experiment, db = tmp_path / "pairs.toml", tmp_path / "r.db"
    experiment.write_text(EXPERIMENT)
    assert main(["run", str(experiment), "--db", str(db), "--smrbench", str(fake_smrbench)]) == 0
    assert main(["plot", "--db", str(db), "--out", str(tmp_path / "plots")]) == 0
    svg = (tmp_path / "plots" / "pairs" / "compare-free.svg").read_text()
    assert "free=amortized (B) vs free=batch (A)" in svg


def test_paired_intervals_cancel_the_drift_between_rounds() -> None:
    # Rounds drift by 40 % (a shared machine), each trial adds 5 % of its own: with 5 rounds the
    # paired interval covers an A/A ratio of 1.0 at about its rate (93 % of 300 here) and finds
    # a 15 % difference almost as often (89 %), where the unpaired medians' interval, drowned
    # in the drift, almost never does.
    rng = np.random.default_rng(7)
    covered = found = found_unpaired = 0
    for repetition in range(300):
        drift = np.exp(rng.normal(0, 0.4, 5))
        a, b = drift * np.exp(rng.normal(0, 0.05, (2, 5)))
        faster = 1.15 * drift * np.exp(rng.normal(0, 0.05, 5))
        covered += bootstrap_paired_ratio(list(a), list(b), resamples=2000, seed=repetition).covers(
            1.0
        )
        found += not bootstrap_paired_ratio(list(a), list(faster), resamples=2000).covers(1.0)
        found_unpaired += not bootstrap_ratio(list(a), list(faster), resamples=2000).covers(1.0)
    assert covered / 300 >= 0.9
    assert found / 300 >= 0.8 and found_unpaired / 300 <= 0.1
    with pytest.raises(ValueError, match="differ in length"):
        bootstrap_paired_ratio([1.0], [1.0, 2.0])
