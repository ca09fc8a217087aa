"""Experiment files: grid expansion, relative thread counts, validation errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from smrlab.cli import main
from smrlab.errors import UsageError
from smrlab.grid import config_key, expand, jobs, load_experiment, parse_experiment, parse_threads
from smrlab.options import OPTIONS
from smrlab.plan import make_plan

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


TUNINGS = """
[experiment]
name = "tunings"
[grid]
reclaimer = ["ebr", "debra", "hp", "qsbr"]
check_every = [5, 10]
[fixed]
ds = "hm_list"
advance_every = 50
bag_size = 64
quiescent_every = 20
"""


def test_a_tuning_goes_only_to_the_reclaimers_that_read_it() -> None:
    # smrbench refuses --check-every with ebr; an experiment that fixes several schemes'
    # settings at once still runs, each reclaimer given its own.
    plan = make_plan(parse_experiment(TUNINGS), None, cpus=2)
    configs = [job.options for job in plan.jobs]
    by_reclaimer: dict[str, list[dict]] = {}
    for config in configs:
        by_reclaimer.setdefault(str(config["reclaimer"]), []).append(config)
    assert sorted(c["check_every"] for c in by_reclaimer["debra"]) == [5, 10]
    for reclaimer in ("ebr", "hp", "qsbr"):
        assert len(by_reclaimer[reclaimer]) == 1, "the check_every axis collapses"
    assert by_reclaimer["ebr"][0]["advance_every"] == 50
    assert by_reclaimer["hp"][0]["bag_size"] == 64
    assert by_reclaimer["qsbr"][0]["quiescent_every"] == 20
    given = {r: set(c[0]) for r, c in by_reclaimer.items()}
    assert given["ebr"].isdisjoint({"check_every", "bag_size", "quiescent_every"})
    assert given["debra"].isdisjoint({"advance_every", "bag_size", "quiescent_every"})
    assert given["hp"].isdisjoint({"check_every", "advance_every", "quiescent_every"})
    assert given["qsbr"].isdisjoint({"check_every", "advance_every", "bag_size"})
    assert all(c["ds"] == "hm_list" for c in configs)
    assert "check_every is read only by debra: left out of the runs of ebr, hp, qsbr" in (
        plan.notes
    )
    assert any(n.startswith("bag_size is read only by ") for n in plan.notes)


def test_the_tunings_each_reclaimer_reads() -> None:
    # From smrbench's description (generated from each domain's traits.reads).
    readers = {key: option.reclaimers for key, option in OPTIONS.items()}
    assert readers["check_every"] == ("debra",)
    assert readers["advance_every"] == ("ebr", "nebr")
    assert readers["quiescent_every"] == ("qsbr", "qsbr_ibr", "urcu_qsbr")
    assert readers["token_check_every"] == ("token_periodic",)
    assert set(readers["bag_size"]) == {
        "rcu",
        "qsbr_ibr",
        "hp",
        "hp_pop",
        "hp_pp",
        "he",
        "he_pop",
        "epoch_pop",
        "ibr",
        "wfe",
        "hyaline",
        "crystalline_l",
        "crystalline",
        "nbr",
        "nbrplus",
    }
    assert set(readers["epoch_freq"]) == {
        "rcu",
        "qsbr_ibr",
        "he",
        "he_pop",
        "epoch_pop",
        "ibr",
        "wfe",
        "hyaline",
        "crystalline_l",
        "crystalline",
    }
    assert readers["nbr_low_watermark"] == ("hp_pop", "epoch_pop", "nbrplus")
    assert readers["nbr_high_watermark"] == ("hp_pop", "epoch_pop", "nbr", "nbrplus")
    assert readers["pop_signal"] == ("hp_pop", "he_pop", "epoch_pop")
    for key in ("ds", "threads", "free", "free_k", "alloc", "key_range"):
        assert readers[key] is None


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


@pytest.mark.parametrize(
    ("value", "cpus", "expected"),
    [
        (3, 8, 3),
        ("1x", 8, 8),
        ("2x", 2, 4),
        ("0.5x", 2, 1),
        ("8x", 2, 16),
        ("0.1x", 2, 1),
        (" 4 x ", 3, 12),
    ],
)
def test_relative_threads(value: object, cpus: int, expected: int) -> None:
    assert parse_threads(value, cpus) == expected  # type: ignore[arg-type]


def test_duplicate_thread_counts_after_resolution_run_once() -> None:
    experiment = parse_experiment('[experiment]\nname = "d"\n[grid]\nthreads = ["1x", 2]\n')
    assert [c["threads"] for c in expand(experiment, cpus=2)] == [2]


def test_scalar_means_one_element_list_and_workload_shorthand() -> None:
    experiment = parse_experiment(
        '[experiment]\nname = "w"\n[grid]\nreclaimer = "debra"\nworkload = ["50/50", "5/5"]\n'
    )
    configs = expand(experiment, cpus=1)
    assert [(c["insert"], c["erase"]) for c in configs] == [(50, 50), (5, 5)]
    assert all(c["reclaimer"] == "debra" and "workload" not in c for c in configs)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[experiment]\nname = "x"\n[grids]\nds = "a"\n', "unknown table [grids]"),
        ('[grid]\nds = "a"\n', "missing [experiment]"),
        ('[experiment]\nname = "x"\ncolour = "red"\n', "unknown key 'colour' in [experiment]"),
        ('[experiment]\nname = "has space"\n', "name must be"),
        ('[experiment]\nname = "x"\n[grid]\nkey_rnage = [1]\n', "did you mean 'key_range'"),
        ('[experiment]\nname = "x"\n[grid]\nkey-range = [1]\n', "did you mean 'key_range'"),
        ('[experiment]\nname = "x"\n[grid]\nthreads = ["lots"]\n', "is not a thread count"),
        ('[experiment]\nname = "x"\n[grid]\nthreads = [0]\n', "is not a thread count"),
        ('[experiment]\nname = "x"\n[grid]\nthreads = [2.5]\n', "is not a thread count"),
        ('[experiment]\nname = "x"\n[grid]\nkey_range = ["big"]\n', "expected a decimal integer"),
        (
            '[experiment]\nname = "x"\n[grid]\nduration = [true]\n',
            "finite decimal number, got 'true'",
        ),
        ('[experiment]\nname = "x"\n[grid]\nstall = ["yes"]\n', "expected true or false"),
        ('[experiment]\nname = "x"\n[grid]\nfree = ["sometimes"]\n', "one of batch, amortized"),
        ('[experiment]\nname = "x"\n[grid]\ninsert = [101]\n', "in [0, 100]"),
        ('[experiment]\nname = "x"\n[grid]\nduration = [0]\n', "in [0.001, 86400]"),
        ('[experiment]\nname = "x"\n[grid]\nduration = [nan]\n', "finite decimal number"),
        ('[experiment]\nname = "x"\n[fixed]\nduration = inf\n', "finite decimal number"),
        ('[experiment]\nname = "x"\n[grid]\nops = [-1]\n', "non-negative integer"),
        ('[experiment]\nname = "x"\n[fixed]\nseed = -1\n', "non-negative integer"),
        ('[experiment]\nname = "x"\n[grid]\nthreads = [5000]\n', "in [1, 4096]"),
        (
            '[experiment]\nname = "x"\n[grid]\nkey_range = [2199023255552]\n',
            "in [1, 1099511627776]",
        ),
        ('[experiment]\nname = "x"\n[grid]\nds = []\n', "empty list"),
        ('[experiment]\nname = "x"\n[fixed]\nds = ["a", "b"]\n', "belong in [grid]"),
        (
            '[experiment]\nname = "x"\n[grid]\nds = ["a"]\n[fixed]\nds = "a"\n',
            "both [grid] and [fixed]",
        ),
        ('[experiment]\nname = "x"\n[grid]\ninsert = [60]\nerase = [50]\n', "over 100 percent"),
        ('[experiment]\nname = "x"\n[grid]\nworkload = ["60/50"]\n', "over 100 percent"),
        ('[experiment]\nname = "x"\n[grid]\nworkload = ["half"]\n', "INSERT/ERASE"),
        ('[experiment]\nname = "x"\n[grid]\nworkload = ["5/5"]\ninsert = [5]\n', "either workload"),
        ('[experiment]\nname = "x"\n[grid]\ntrials = [1, 3]\n', "trials must be a single"),
        ('[experiment]\nname = "x"\n[grid\n', "invalid TOML"),
        ('[experiment]\nname = "x"\n[sizes.quick]\nduration = 5\n', "not 'quick'"),
        ('[experiment]\nname = "x"\n[sizes.paper]\ndurations = 5\n', "size paper: unknown option"),
        ('[experiment]\nname = "x"\n[sizes.paper]\nthreads = [0]\n', "size paper: "),
    ],
)
def test_validation_errors_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=None) as error:
        parse_experiment(text, Path("bad.toml"))
    assert message in str(error.value)
    assert str(error.value).startswith("bad.toml: ")
    assert "\n" not in str(error.value)


SIZED = """
[experiment]
name = "sized"
description = "quick by default, paper on request"
[grid]
reclaimer = ["none", "debra"]
threads = ["1x", "2x"]
[fixed]
workload = "50/50"
key_range = 2000000
duration = 1
trials = 3
[sizes.paper]
threads = ["0.5x", "1x"]
key_range = 20000000
duration = 5
workload = ["50/50", "25/25"]
pin = "compact"
"""


def test_sizes_quick_is_the_grid_and_a_named_size_replaces_options() -> None:
    quick = parse_experiment(SIZED)
    assert quick.size == "quick" and quick.sizes == ("quick", "paper")
    assert {(c["threads"], c["key_range"], c["duration"]) for c in expand(quick, cpus=4)} == {
        (4, 2000000, 1),
        (8, 2000000, 1),
    }
    paper = parse_experiment(SIZED, size="paper")
    configs = expand(paper, cpus=4)
    assert len(configs) == 2 * 2 * 2  # reclaimer × threads × workload (a list: now in the grid)
    assert {c["threads"] for c in configs} == {2, 4}
    assert all(
        c["key_range"] == 20000000 and c["duration"] == 5 and c["pin"] == "compact" for c in configs
    )
    assert {(c["insert"], c["erase"]) for c in configs} == {(50, 50), (25, 25)}
    assert paper.trials == 3
    with pytest.raises(
        UsageError,
        match=r"no size 'huge' \(sizes of this experiment: quick, "
        r"paper\)",
    ):
        parse_experiment(SIZED, size="huge")


def test_run_size_option(tmp_path: Path, capsys) -> None:
    path = tmp_path / "sized.toml"
    path.write_text(SIZED)
    missing = str(tmp_path / "missing")
    assert main(["run", str(path), "--dry-run", "--smrbench", missing, "--size", "paper"]) == 0
    out = capsys.readouterr()
    assert "--duration 5 " in out.out and "--key-range 20000000" in out.out
    assert "dry run of sized (size paper)" in out.err
    assert main(["run", str(path), "--dry-run", "--smrbench", missing, "--size", "big"]) == 2
    assert "no size 'big'" in capsys.readouterr().err


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read experiment file"):
        load_experiment(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    "path", sorted((REPO / "experiments").glob("*.toml")), ids=lambda p: p.name
)
def test_shipped_experiments_are_valid(path: Path) -> None:
    experiment = load_experiment(path)
    assert experiment.name == path.stem
    assert experiment.description
    assert "paper" in experiment.sizes, "every shipped experiment has a paper size"
    assert path.read_text().startswith("# "), "each experiment starts with a header comment"
    assert len(expand(experiment, cpus=2)) > 0


def test_every_passed_option_is_a_flag_of_the_real_smrbench(smrbench: Path) -> None:
    """An experiment key smrlab accepts must exist in smrbench, or a long grid fails late."""
    import subprocess

    from smrlab.options import OPTIONS

    help_text = subprocess.run(
        [str(smrbench), "--help"], capture_output=True, text=True, check=True
    ).stdout
    missing = [o.flag for o in OPTIONS.values() if o.passed and o.flag not in help_text]
    assert missing == [], f"smrlab passes flags smrbench does not have: {missing}"


def test_the_option_snapshot_is_smrbenchs_own_description(smrbench: Path) -> None:
    """smrlab reads smrbench's options (names, types, ranges, choices) from a snapshot of
    smrbench --list --json; it must be the description of the smrbench of this checkout, so
    that a grid smrlab accepts is one smrbench accepts."""
    import json
    import subprocess

    from smrlab.options import DESCRIPTION_PATH, load_description

    listing = json.loads(
        subprocess.run(
            [str(smrbench), "--list", "--json"], capture_output=True, text=True, check=True
        ).stdout
    )
    described = {key: listing[key] for key in ("options", "statistics")}
    assert load_description() == described, (
        f"{DESCRIPTION_PATH} is stale: regenerate it (python/src/smrlab/options.py says how)"
    )


def test_options_come_from_the_description() -> None:
    from smrlab.options import OPTIONS, load_description

    options = load_description()["options"]
    described = {
        row["key"]: row for row in options if row["target"] != "output" and "set" in row["commands"]
    }
    assert set(described) <= set(OPTIONS)
    assert "block_size" not in OPTIONS, "threadtest's option among the set benchmark's"
    for key, row in described.items():
        assert (OPTIONS[key].minimum, OPTIONS[key].maximum) == (row["minimum"], row["maximum"])
    assert OPTIONS["free"].choices == ("batch", "amortized")
    assert OPTIONS["threads"].kind == "threads"
    assert not OPTIONS["trials"].passed
    assert "json" not in OPTIONS, "output options are not part of a run"


# A bad value as typed after smrbench's flag, and as written in an experiment file.
_BAD_VALUES = [
    ("ops", "-1", "-1"),
    ("seed", "-1", "-1"),
    ("seed", "99999999999999999999999", "99999999999999999999999"),
    ("key_range", "0", "0"),
    ("key_range", "2.5", "2.5"),
    ("key_range", "big", '"big"'),
    ("insert", "101", "101"),
    ("duration", "0", "0"),
    ("duration", "nan", "nan"),
    ("duration", "inf", "inf"),
    ("duration", "100000", "100000"),
    ("sample_ms", "3600001", "3600001"),
    ("free", "sometimes", '"sometimes"'),
    ("pin", "everywhere", '"everywhere"'),
    ("on_empty", "wait", '"wait"'),
]


@pytest.mark.parametrize(("key", "typed", "written"), _BAD_VALUES)
def test_a_bad_grid_value_is_refused_in_smrbenchs_words(
    smrbench: Path, key: str, typed: str, written: str
) -> None:
    """The refusal of a grid value reads as smrbench's refusal of the same value on its
    command line, after the option's name."""
    import subprocess

    flag = "--" + key.replace("_", "-")
    ran = subprocess.run([str(smrbench), flag, typed], check=False, capture_output=True, text=True)
    assert ran.returncode == 2, ran.stderr
    cli_reason = ran.stderr.strip().split(f"{flag}: ", 1)[1]
    with pytest.raises(UsageError) as refused:
        parse_experiment(f'[experiment]\nname = "x"\n[grid]\n{key} = [{written}]\n')
    grid_reason = str(refused.value).split(f"[grid] {key}: ", 1)[1]
    assert grid_reason == cli_reason


def _documented_defaults() -> dict[str, str]:
    """docs/smrbench.md's options table: each flag's default cell (a row may name several
    flags, their defaults in the same order)."""
    import re

    from conftest import REPO

    defaults: dict[str, str] = {}
    for line in (REPO / "docs" / "smrbench.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.split(" | ")]
        if not line.startswith("| `--") or len(cells) < 2:
            continue
        flags = re.findall(r"`(--[a-z-]+)", cells[0])
        values = cells[1].split() if len(flags) > 1 else [cells[1]]
        defaults.update(zip(flags, values, strict=False))
    return defaults


def test_docs_list_every_option_with_its_default() -> None:
    """The options table of docs/smrbench.md is written by hand: it must name every option
    smrbench describes, with the same default."""
    from smrlab.options import load_description

    documented = _documented_defaults()
    for row in load_description()["options"]:
        flag, default = row["flag"], row["default"]
        assert flag in documented, f"docs/smrbench.md does not document {flag}"
        for value in set((row.get("default_by_reclaimer") or {}).values()):
            assert str(value) in documented[flag], f"docs/smrbench.md omits {flag}'s {value}"
        if default is None or flag == "--list":
            continue  # derived from other options (said in words), or an action
        expected = "off" if default is False or default == "" else str(default).removesuffix(".0")
        shown = documented[flag].split(" (")[0].strip("`")
        assert shown == expected, f"docs/smrbench.md gives {flag} the default {shown!r}"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('benchmark = "malloc"', "benchmark: expected one of set, threadtest, layout"),
        ('benchmark = "threadtest"\n[fixed]\nds = "lazylist"', "an option of the set benchmark"),
        ('benchmark = "threadtest"\n[fixed]\nblocks = 8', "unknown option 'blocks'"),
        ('benchmark = "layout"\n[fixed]\nthreads = 2', "an option of the set benchmark"),
        ('benchmark = "threadtest"\n[fixed]\nblock_size = 0', "[fixed] block_size"),
        ('benchmark = "threadtest"\n[fixed]\nworkload = "50/50"', "unknown option 'workload'"),
        ("[fixed]\nblock_size = 16", "unknown option 'block_size'"),
    ],
)
def test_each_benchmark_takes_only_its_own_options(body: str, message: str) -> None:
    source = f'[experiment]\nname = "e"\n{body}\n'
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_experiment(source)


def test_a_threadtest_grid_expands_to_threadtest_jobs() -> None:
    source = (
        '[experiment]\nname = "e"\nbenchmark = "threadtest"\n'
        "[grid]\nblock_size = [16, 64]\nalloc = ['glibc', 'jemalloc']\n[fixed]\ntrials = 3\n"
    )
    experiment = parse_experiment(source)
    assert experiment.benchmark == "threadtest"
    planned = jobs(experiment, expand(experiment, cpus=2))
    assert len(planned) == 12 and {job.benchmark for job in planned} == {"threadtest"}
