"""Experiment files: grid expansion, relative thread counts, validation errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smrlab.errors import UsageError
from smrlab.grid import config_key, expand, jobs, load_experiment, parse_experiment, parse_threads

REPO = Path(__file__).resolve().parents[2]

BASIC = """
[experiment]
name = "basic"
description = "three reclaimers"
[grid]
reclaimer = ["none", "debra", "qsbr"]
free = ["batch", "amortized"]
threads = [1, "2x"]
[fixed]
ds = "dgt_bst"
duration = 0.5
trials = 3
"""


def test_grid_is_the_product_merged_with_fixed() -> None:
    experiment = parse_experiment(BASIC)
    configs = expand(experiment, cpus=4)
    assert len(configs) == 3 * 2 * 2
    assert {c["reclaimer"] for c in configs} == {"none", "debra", "qsbr"}
    assert {c["threads"] for c in configs} == {1, 8}
    assert all(c["ds"] == "dgt_bst" and c["duration"] == 0.5 for c in configs)
    assert "trials" not in configs[0]
    assert experiment.trials == 3


def test_jobs_are_trial_major_with_distinct_seeds_and_keys() -> None:
    experiment = parse_experiment(BASIC)
    configs = expand(experiment, cpus=2)
    all_jobs = jobs(experiment, configs)
    assert len(all_jobs) == 12 * 3
    assert [job.trial for job in all_jobs[:12]] == [0] * 12  # every config's trial 0 first
    assert {job.seed for job in all_jobs} == {1, 2, 3}
    assert len({job.key for job in all_jobs}) == len(all_jobs)
    key = json.loads(all_jobs[13].key)
    assert key["trial"] == 1 and "trials" not in key
    assert all_jobs[0].label.endswith("trial 1/3")


def test_config_key_is_canonical() -> None:
    assert config_key({"b": 1, "a": "x"}, 2) == config_key({"a": "x", "b": 1}, 2)
    assert config_key({"a": 1}, 0) == '{"a":1,"trial":0}'


@pytest.mark.parametrize(("value", "cpus", "expected"),
                         [(3, 8, 3), ("1x", 8, 8), ("2x", 2, 4), ("0.5x", 2, 1),
                          ("8x", 2, 16), ("0.1x", 2, 1), (" 4 x ", 3, 12)])
def test_relative_threads(value: object, cpus: int, expected: int) -> None:
    assert parse_threads(value, cpus) == expected  # type: ignore[arg-type]


def test_duplicate_thread_counts_after_resolution_run_once() -> None:
    experiment = parse_experiment('[experiment]\nname = "d"\n[grid]\nthreads = ["1x", 2]\n')
    assert [c["threads"] for c in expand(experiment, cpus=2)] == [2]


def test_scalar_means_one_element_list_and_workload_shorthand() -> None:
    experiment = parse_experiment('[experiment]\nname = "w"\n[grid]\nreclaimer = "debra"\n'
                                  'workload = ["50/50", "5/5"]\n')
    configs = expand(experiment, cpus=1)
    assert [(c["insert"], c["erase"]) for c in configs] == [(50, 50), (5, 5)]
    assert all(c["reclaimer"] == "debra" and "workload" not in c for c in configs)


@pytest.mark.parametrize(("text", "message"), [
    ('[experiment]\nname = "x"\n[grids]\nds = "a"\n', "unknown table [grids]"),
    ('[grid]\nds = "a"\n', "missing [experiment]"),
    ('[experiment]\nname = "x"\ncolour = "red"\n', "unknown key 'colour' in [experiment]"),
    ('[experiment]\nname = "has space"\n', "name must be"),
    ('[experiment]\nname = "x"\n[grid]\nkey_rnage = [1]\n', "did you mean 'key_range'"),
    ('[experiment]\nname = "x"\n[grid]\nkey-range = [1]\n', "did you mean 'key_range'"),
    ('[experiment]\nname = "x"\n[grid]\nthreads = ["lots"]\n', "is not a thread count"),
    ('[experiment]\nname = "x"\n[grid]\nthreads = [0]\n', "is not a thread count"),
    ('[experiment]\nname = "x"\n[grid]\nthreads = [2.5]\n', "is not a thread count"),
    ('[experiment]\nname = "x"\n[grid]\nkey_range = ["big"]\n', "expected an integer"),
    ('[experiment]\nname = "x"\n[grid]\nduration = [true]\n', "expected a number"),
    ('[experiment]\nname = "x"\n[grid]\nstall = ["yes"]\n', "expected true or false"),
    ('[experiment]\nname = "x"\n[grid]\nfree = ["sometimes"]\n', "not one of batch, amortized"),
    ('[experiment]\nname = "x"\n[grid]\ninsert = [101]\n', "above the maximum"),
    ('[experiment]\nname = "x"\n[grid]\nduration = [0]\n', "below the minimum"),
    ('[experiment]\nname = "x"\n[grid]\nds = []\n', "empty list"),
    ('[experiment]\nname = "x"\n[fixed]\nds = ["a", "b"]\n', "belong in [grid]"),
    ('[experiment]\nname = "x"\n[grid]\nds = ["a"]\n[fixed]\nds = "a"\n', "both [grid] and [fixed]"),
    ('[experiment]\nname = "x"\n[grid]\ninsert = [60]\nerase = [50]\n', "over 100 percent"),
    ('[experiment]\nname = "x"\n[grid]\nworkload = ["60/50"]\n', "over 100 percent"),
    ('[experiment]\nname = "x"\n[grid]\nworkload = ["half"]\n', "INSERT/ERASE"),
    ('[experiment]\nname = "x"\n[grid]\nworkload = ["5/5"]\ninsert = [5]\n', "either workload"),
    ('[experiment]\nname = "x"\n[grid]\ntrials = [1, 3]\n', "trials must be a single"),
    ('[experiment]\nname = "x"\n[grid\n', "invalid TOML"),
])
def test_validation_errors_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=None) as error:
        parse_experiment(text, Path("bad.toml"))
    assert message in str(error.value)
    assert str(error.value).startswith("bad.toml: ")
    assert "\n" not in str(error.value)


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read experiment file"):
        load_experiment(tmp_path / "nope.toml")


@pytest.mark.parametrize("path", sorted((REPO / "experiments").glob("*.toml")),
                         ids=lambda p: p.name)
def test_shipped_experiments_are_valid(path: Path) -> None:
    experiment = load_experiment(path)
    assert experiment.name == path.stem
    assert experiment.description
    assert path.read_text().startswith("# "), "each experiment starts with a header comment"
    assert len(expand(experiment, cpus=2)) > 0
