"""`smrlab advise`: the workload file, the ranking rules on planted results, the budget, and
the command end to end (a fake smrbench for the structure, the real one for a planted answer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import write_fake_smrbench
from smrlab.advice_rank import rank, short_reason
from smrlab.advice_view import figure, text
from smrlab.advice_workload import parse_workload, resolve
from smrlab.cli import main
from smrlab.errors import UsageError
from smrlab.store import Store

FAMILIES = {"ebr": "epoch", "debra": "epoch", "hp": "reservation", "nbrplus": "neutralization"}
BOUNDED = {"ebr": False, "debra": False, "hp": True, "nbrplus": True}

LISTING: dict[str, Any] = {
    "allocators": [{"name": "glibc", "available": True}, {"name": "jemalloc", "available": True}],
    "data_structures": ["hash_set", "abtree", "ms_queue"],
    "default_key_range": {"hash_set": 1000, "abtree": 1000, "ms_queue": 1000},
    "free": ["batch", "amortized"],
    "pin": ["none"],
    "machine": {"cpus": 2, "cores": 2, "cpu_model": "fake"},
    "build": {"commit": "0" * 40, "build_type": "Release"},
    "reclaimers": [
        {"name": "none", "family": "leak", "garbage_bounded": False},
        *(
            {"name": name, "family": FAMILIES[name], "garbage_bounded": BOUNDED[name]}
            for name in FAMILIES
        ),
    ],
    "combinations": [
        {"ds": ds, "reclaimer": name, "valid": True, "safe": True, "reason": "fine."}
        for ds in ("hash_set", "ms_queue")
        for name in ("none", *FAMILIES)
    ]
    + [
        {"ds": "abtree", "reclaimer": name, "valid": True, "safe": name != "hp", "reason": why}
        for name, why in (
            ("none", "never frees."),
            ("ebr", "a grace period."),
            ("debra", "a grace period."),
            ("nbrplus", "read phases restart."),
            ("hp", "its readers pass unlinked nodes, so: a reservation cannot (NBR paper)."),
        )
    ],
}


def workload(**keys: Any) -> Any:
    table = {"ds": "hash_set", "threads": 2, **keys}
    lines = ["[workload]"] + [f"{key} = {json.dumps(value)}" for key, value in table.items()]
    return resolve(parse_workload("\n".join(lines)), LISTING, Path("w.toml"))


def run(reclaimer: str, throughput: float, *, stall: bool = False, **extra: Any) -> dict:
    garbage = extra.pop("garbage", 4000)
    p999 = extra.pop("p999", 1000)
    options = {"reclaimer": reclaimer, "free": "batch", "alloc": "glibc", "stall": stall, **extra}
    counters = {"garbage_peak": garbage, "free_latency_ns": {"p99": 100, "p999": p999}}
    return {
        "options": options,
        "throughput": throughput,
        "peak_rss_bytes": 10 << 20,
        "result": {"reclaimer": counters},
    }


def planted_runs() -> list[dict]:
    """ebr and debra fastest, nbrplus next, hp slowest; the epochs' garbage explodes when a
    thread stalls, the others' stays at their thresholds."""
    speeds = {"ebr": 5.0e6, "debra": 4.9e6, "nbrplus": 4.0e6, "hp": 3.0e6}
    noise = {  # each trial's own, as a round's drift would cancel in the pair ratios
        "ebr": (1.00, 1.02, 0.98, 1.01, 0.99),
        "debra": (1.02, 0.99, 1.01, 0.98, 1.03),
        "nbrplus": (0.99, 1.01, 1.00, 1.02, 0.98),
        "hp": (1.01, 0.98, 1.02, 0.99, 1.00),
    }
    runs = []
    for trial in range(5):
        runs += [
            run(name, speed * noise[name][trial], garbage=2000, trial=trial)
            for name, speed in speeds.items()
        ]
    stalled = {"ebr": 1.2e6, "debra": 1.1e6, "nbrplus": 4100, "hp": 4050}
    runs += [run(name, 1e6, stall=True, garbage=garbage) for name, garbage in stalled.items()]
    return runs


# --- the workload file ----------------------------------------------------------------------


def test_a_workload_file_is_read_with_its_defaults() -> None:
    got = parse_workload('[workload]\nds = "tree"\nthreads = "4x"\nstalls = true\n')
    assert (got.ds, got.threads, got.stalls, got.insert, got.erase) == ("tree", "4x", True, 50, 50)
    assert got.allocators == ("glibc", "jemalloc")
    assert got.memory_budget_nodes is None and got.reclaimers is None
    mapped = resolve(got, LISTING, Path("w.toml"))
    assert (mapped.ds, mapped.asked_ds) == ("abtree", "tree")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("", "missing [workload] table"),
        ("[workload]\nthreads = 2\n", "needs ds"),
        ('[workload]\nds = "set"\nstall = true\n', "unknown key 'stall' in [workload] (did you"),
        ('[workload]\nds = "set"\ninsert = 60\nerase = 50\n', "over 100 percent"),
        ('[workload]\nds = "set"\nthreads = 0\n', "threads must be 1 to 4096 or 'Nx'"),
        ('[workload]\nds = "set"\nstalls = "yes"\n', "stalls must be true or false"),
        ('[workload]\nds = "set"\nmemory_budget_nodes = -1\n', "memory_budget_nodes must be"),
        ('[workload]\nds = "set"\nallocators = []\n', "non-empty list of names"),
        ('[workload]\nds = "set"\n[grid]\nx = 1\n', "unknown table [grid]"),
        ("[workload\n", "invalid TOML"),
    ],
)
def test_bad_workload_files_are_one_line_naming_the_file(body: str, message: str) -> None:
    with pytest.raises(UsageError) as error:
        parse_workload(body, Path("mine.toml"))
    assert str(error.value).startswith("mine.toml: ")
    assert message in str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"ds": "skiplist"}, "'skiplist' is not a structure of this smrbench"),
        ({"allocators": ["hoard"]}, "'hoard' is not available in this smrbench"),
        ({"reclaimers": ["ebrr"]}, "'ebrr' is not a reclaimer of this smrbench (did you mean"),
    ],
)
def test_names_are_checked_against_the_smrbench(keys: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        workload(**keys)


# --- the ranking on planted results ---------------------------------------------------------


def test_stalls_exclude_the_epoch_family_whatever_its_speed() -> None:
    advice = rank(workload(stalls=True), LISTING, planted_runs(), duration=1.0)
    assert advice["recommendation"]["reclaimer"] == "nbrplus"
    assert [row["reclaimer"] for row in advice["ranked"]] == ["nbrplus", "hp"]
    assert advice["ranked"][1]["group"] == 2
    assert advice["ranked"][1]["verdict"].startswith("slower: 0.77× the best (0.73–0.77)")
    assert "announces and validates every node it visits" in advice["ranked"][1]["verdict"]
    reasons = {row["reclaimer"]: row["reason"] for row in advice["excluded"]}
    assert reasons["ebr"] == (
        "unbounded garbage under a stall: 1.2M nodes held after 1 s with one thread stalled"
    )
    assert reasons["debra"].startswith("unbounded garbage under a stall: 1.1M nodes")
    assert reasons["none"] == "never frees memory (the leak baseline)"


def test_without_stalls_the_epochs_win_and_tie_within_the_noise() -> None:
    advice = rank(workload(stalls=False), LISTING, planted_runs(), duration=1.0)
    assert [row["reclaimer"] for row in advice["ranked"]] == ["ebr", "debra", "nbrplus", "hp"]
    ebr, debra = advice["ranked"][:2]
    assert ebr["verdict"] == "recommended" and ebr["group"] == 1
    assert debra["group"] == 1, "2 % apart with 2 % noise is not a difference"
    assert debra["verdict"].startswith("indistinguishable from the recommendation")
    assert advice["ranked"][2]["group"] == 2 and advice["ranked"][3]["group"] == 3


def test_a_memory_budget_excludes_what_holds_more_garbage() -> None:
    runs = planted_runs()
    for row in runs:
        if row["options"]["reclaimer"] == "ebr" and not row["options"]["stall"]:
            row["result"]["reclaimer"]["garbage_peak"] = 50_000
    advice = rank(workload(memory_budget_nodes=10_000), LISTING, runs, duration=1.0)
    assert advice["recommendation"]["reclaimer"] == "debra"
    reasons = {row["reclaimer"]: row["reason"] for row in advice["excluded"]}
    assert reasons["ebr"] == "over the memory budget: garbage peak 50K, budget 10K"
    stalled = rank(workload(stalls=True, memory_budget_nodes=4_075), LISTING, runs, duration=1.0)
    assert stalled["recommendation"]["reclaimer"] == "hp"
    reasons = {row["reclaimer"]: row["reason"] for row in stalled["excluded"]}
    assert reasons["nbrplus"] == (
        "over the memory budget: garbage peak 4,100 under a stall, budget 4,075"
    )


def test_a_latency_sensitive_workload_picks_the_tie_with_the_shorter_free_tail() -> None:
    runs = [
        row
        for row in planted_runs()
        if not row["options"]["stall"] and row["options"]["reclaimer"] in ("ebr", "debra")
    ]
    for row in runs:
        row["result"]["reclaimer"]["free_latency_ns"]["p999"] = (
            90_000 if row["options"]["reclaimer"] == "ebr" else 2_000
        )
    plain = rank(workload(), LISTING, runs, duration=1.0)
    assert plain["recommendation"]["reclaimer"] == "ebr"
    sensitive = rank(workload(latency_sensitive=True), LISTING, runs, duration=1.0)
    assert sensitive["recommendation"]["reclaimer"] == "debra"
    # A noisy scheme at 0.8× lands in group 1 by its wide interval, with the shortest tail of
    # all: a latency-sensitive workload still does not give up 20 % for it.
    ebr = [row["throughput"] for row in runs if row["options"]["reclaimer"] == "ebr"]
    runs += [
        run("hp", speed * factor, trial=trial, p999=100)
        for trial, (speed, factor) in enumerate(zip(ebr, (0.5, 1.3, 0.8, 0.75, 1.2), strict=True))
    ]
    sensitive = rank(workload(latency_sensitive=True), LISTING, runs, duration=1.0)
    hp = next(row for row in sensitive["ranked"] if row["reclaimer"] == "hp")
    assert hp["group"] == 1 and hp["ratio"] == pytest.approx(0.8)
    assert sensitive["recommendation"]["reclaimer"] == "debra"


def test_refused_schemes_are_listed_with_the_tables_reason() -> None:
    advice = rank(workload(ds="abtree"), LISTING, [], duration=1.0)
    reasons = {row["reclaimer"]: row["reason"] for row in advice["excluded"]}
    assert reasons["hp"] == "refused: its readers pass unlinked nodes, so"
    assert advice["recommendation"] is None
    assert short_reason("a grace period (NBR paper).") == "a grace period"


def test_too_few_trials_are_not_placed() -> None:
    runs = [run("ebr", 5e6), run("ebr", 5e6), run("hp", 3e6)] + [run("hp", 3e6)] * 2
    advice = rank(workload(), LISTING, runs, duration=1.0)
    assert [row["reclaimer"] for row in advice["ranked"]] == ["hp"]
    reasons = {row["reclaimer"]: row["reason"] for row in advice["excluded"]}
    assert reasons["ebr"] == "too few trials to place (2 of 3)"


# --- end to end -----------------------------------------------------------------------------


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    """A fake smrbench with this file's LISTING: every trial instant, every result equal."""
    return write_fake_smrbench(tmp_path / "fake-smrbench", LISTING)


def test_a_tiny_budget_still_gives_a_complete_advice(tmp_path: Path, fake: Path, capsys) -> None:
    spec = tmp_path / "mine.toml"
    spec.write_text('[workload]\nds = "set"\nthreads = 2\nstalls = true\n')
    db = tmp_path / "store.db"
    argv = ["advise", str(spec), "--budget", "20", "--db", str(db), "--smrbench", str(fake)]
    assert main([*argv, "--json"]) == 0
    advice = json.loads(capsys.readouterr().out)
    assert advice["trial_seconds"] == 0.5, "the longest trial whose screen fits 10 s"
    assert [stage["name"] for stage in advice["stages"]] == ["stall probe", "screen", "refine"]
    assert advice["stages"][0]["trials"] == 4  # every candidate once, with a stall
    assert advice["stages"][1]["trials"] == 2 * 3  # the bounded ones, 3 trials
    assert advice["recommendation"]["reclaimer"] in ("hp", "nbrplus")
    assert {row["reclaimer"] for row in advice["ranked"]} == {"hp", "nbrplus"}
    for row in advice["ranked"]:
        assert row["trials"] == 5 and row["alloc"] in ("glibc", "jemalloc")
        assert row["interval"][0] <= row["ratio"] <= row["interval"][1]
    excluded = {row["reclaimer"]: row["reason"] for row in advice["excluded"]}
    assert excluded["ebr"].startswith("unbounded garbage under a stall: 100 nodes held")
    assert any("CPUs" in line for line in advice["caveats"])
    assert advice["caveats"][0] == (
        "The budget refined free=batch,amortized with glibc only (asked: free=batch,amortized "
        "with glibc, jemalloc); a larger --budget measures the rest."
    )
    with Store(db, write=False) as store:
        assert [stored["workload"]["name"] for stored in store.advice()] == ["mine"]
    # Asked again: everything is in the store, nothing runs.
    assert main(argv) == 0
    shown = capsys.readouterr().out
    assert "0 trials of 0.5 s" in shown and "reused from the store" in shown
    assert "Recommendation: " in shown and "Not recommended" in shown
    out = tmp_path / "report"
    assert main(["report", "--db", str(db), "--out", str(out)]) == 0
    page = (out / "index.html").read_text()
    assert 'id="advice-mine"' in page and "unbounded garbage under a stall" in page


def test_a_budget_too_small_is_one_line(tmp_path: Path, fake: Path, capsys) -> None:
    spec = tmp_path / "w.toml"
    spec.write_text('[workload]\nds = "set"\nthreads = 2\n')
    argv = ["advise", str(spec), "--budget", "1", "--db", str(tmp_path / "s.db")]
    assert main([*argv, "--smrbench", str(fake)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("smrlab: --budget 1: too small for this workload, which needs at least")
    assert "\n" not in err


def test_real_smrbench_respects_the_stall_requirement(
    tmp_path: Path, smrbench: Path, capsys
) -> None:
    """The planted answer on the real binary: with stalls possible, no epoch scheme is
    recommended, and each one's exclusion quotes the garbage it held."""
    spec = tmp_path / "stalls.toml"
    spec.write_text(
        '[workload]\nds = "hm_list"\nkey_range = 100\nthreads = 2\nstalls = true\n'
        'allocators = ["glibc"]\nreclaimers = ["ebr", "debra", "hp", "nbrplus"]\n'
    )
    argv = ["advise", str(spec), "--budget", "16", "--db", str(tmp_path / "s.db"), "--json"]
    assert main([*argv, "--smrbench", str(smrbench)]) == 0
    advice = json.loads(capsys.readouterr().out)
    assert advice["recommendation"]["reclaimer"] in ("hp", "nbrplus")
    excluded = {row["reclaimer"]: row["reason"] for row in advice["excluded"]}
    for epoch in ("ebr", "debra"):
        assert excluded[epoch].startswith("unbounded garbage under a stall: ")
    assert "nodes held after 0.25 s" in excluded["ebr"]
    assert text(advice).startswith("smrlab advise stalls: hm_list, 100 keys")
    plot = figure(advice)
    assert plot is not None and len(plot.figure.axes) == 2  # ratios, garbage under a stall


def test_a_slower_variant_of_a_winner_is_blamed_on_its_allocator() -> None:
    runs = []
    for trial in range(5):
        wobble = 1 + 0.01 * (trial - 2)
        runs += [
            run("hp", 5e6 * wobble),
            run("hp", 3e6 * wobble, alloc="jemalloc"),
            run("nbrplus", 2e6 * wobble),
        ]
    advice = rank(workload(allocators=["glibc", "jemalloc"]), LISTING, runs, duration=1.0)
    verdicts = {(row["reclaimer"], row["alloc"]): row["verdict"] for row in advice["ranked"]}
    assert verdicts[("hp", "jemalloc")].endswith("; hp does better with alloc=glibc")
    assert verdicts[("nbrplus", "glibc")].endswith(
        "; it pays for signals and restarted read phases"
    )


def test_reference_counting_under_a_stall_is_out_for_what_it_can_hold() -> None:
    listing = {
        **LISTING,
        "reclaimers": [*LISTING["reclaimers"], {"name": "lfrc", "family": "reference_count"}],
        "combinations": [
            *LISTING["combinations"],
            {"ds": "hash_set", "reclaimer": "lfrc", "valid": True, "safe": True, "reason": "."},
        ],
    }
    runs = [run("lfrc", 1e6, stall=True, garbage=1), *(run("hp", 1e6) for _ in range(3))]
    advice = rank(workload(stalls=True), listing, runs, duration=1.0)
    reasons = {row["reclaimer"]: row["reason"] for row in advice["excluded"]}
    assert reasons["lfrc"] == (
        "garbage not bounded under a stall: a stalled thread keeps alive every node reachable "
        "from the one it holds (1 node held here)"
    )


def test_candidates_the_budget_did_not_refine_are_judged_at_the_screen() -> None:
    screen = [
        run(name, speed * (1 + 0.01 * ((trial + index) % 3 - 1)), trial=trial)
        for trial in range(3)
        for index, (name, speed) in enumerate(
            (("ebr", 5e6), ("debra", 4.95e6), ("nbrplus", 4.97e6), ("hp", 3e6))
        )
    ]
    refine = [
        run(name, 5e6 * (1 + 0.01 * ((trial + index) % 3 - 1)), trial=trial, free=free)
        for trial in range(5)
        for index, (name, free) in enumerate((("ebr", "batch"), ("debra", "amortized")))
    ]
    advice = rank(workload(), LISTING, screen, refine, duration=1.0)
    assert {row["reclaimer"] for row in advice["ranked"]} == {"ebr", "debra"}
    verdicts = {row["reclaimer"]: row["verdict"] for row in advice["screened"]}
    assert verdicts["nbrplus"].startswith("not refined (the budget refined the 2 ranked first at")
    assert verdicts["nbrplus"].endswith("within the screen's noise")
    assert verdicts["hp"].startswith("slower: 0.60× ebr at the screen (rounds ")


def test_the_example_workloads_are_valid() -> None:
    files = sorted((Path(__file__).parents[2] / "workloads").glob("*.toml"))
    assert len(files) >= 3
    for path in files:
        parsed = parse_workload(path.read_text(), path)
        assert resolve(parsed, LISTING, path).ds in LISTING["data_structures"]


def test_a_stall_probe_over_the_budget_spares_the_screen(
    tmp_path: Path, fake: Path, capsys
) -> None:
    spec = tmp_path / "tight.toml"
    spec.write_text(
        '[workload]\nds = "set"\nthreads = 2\nstalls = true\nmemory_budget_nodes = 50\n'
    )
    argv = ["advise", str(spec), "--budget", "20", "--db", str(tmp_path / "s.db"), "--json"]
    assert main([*argv, "--smrbench", str(fake)]) == 0
    advice = json.loads(capsys.readouterr().out)
    assert [stage["name"] for stage in advice["stages"]] == ["stall probe"]
    assert advice["recommendation"] is None and advice["ranked"] == []
    reasons = {row["reclaimer"]: row["reason"] for row in advice["excluded"]}
    for bounded in ("hp", "nbrplus"):  # the fake holds 100 nodes under a stall
        assert (
            reasons[bounded] == "over the memory budget: garbage peak 100 under a stall, budget 50"
        )
    assert "No candidate meets this workload's requirements" in text(advice)
