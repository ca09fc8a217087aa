"""`smrlab run`: end to end against the real smrbench, dry run, resume, failures, Ctrl-C."""

from __future__ import annotations

import copy
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import FAKE_LISTING
from smrlab import runner
from smrlab.cli import main
from smrlab.errors import UsageError
from smrlab.grid import load_experiment
from smrlab.plan import make_plan
from smrlab.progress import BarProgress, LineProgress, make_progress
from smrlab.runner import Runner
from smrlab.smrbench import Smrbench
from smrlab.store import Store

TINY = """
[experiment]
name = "tiny"
description = "smallest real run"
[grid]
reclaimer = ["none", "debra"]
free = ["batch", "amortized"]
threads = [1, 2]
[fixed]
ds = "dgt_bst"
alloc = "glibc"
key_range = 512
duration = 0.05
trials = 2
"""


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def rows(db: Path, query: str = "SELECT * FROM runs") -> list[sqlite3.Row]:
    connection = sqlite3.connect(db)
    connection.row_factory = sqlite3.Row
    return connection.execute(query).fetchall()


def fake_calls(fake: Path) -> list[dict]:
    log = Path(str(fake) + ".log")
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_run_end_to_end_with_real_smrbench(tmp_path: Path, smrbench: Path, capsys) -> None:
    experiment, db = write(tmp_path, TINY), tmp_path / "r.db"
    assert main(["run", str(experiment), "--db", str(db), "--smrbench", str(smrbench)]) == 0
    err = capsys.readouterr().err
    assert "[16/16] ok" in err and "0 failed" in err  # plain progress lines: stderr is no TTY
    stored = rows(db)
    assert len(stored) == 16
    assert {(r["reclaimer"], r["free"], r["threads"]) for r in stored} == {
        (r, f, t) for r in ("none", "debra") for f in ("batch", "amortized") for t in (1, 2)
    }
    for row in stored:
        result = json.loads(row["result_json"])
        assert row["validated"] == 1 and row["throughput"] > 0 and row["peak_rss_bytes"] > 0
        assert result["config"]["seed"] == 1 + row["trial"] and result["config"]["trials"] == 1
        command = json.loads(row["command"])
        assert command[-6:] == [
            "--trials",
            "1",
            "--seed",
            str(1 + row["trial"]),
            "--json",
            "--quiet",
        ]
        assert json.loads(row["config_key"])["trial"] == row["trial"]
    # Running again stores nothing new and runs nothing.
    assert main(["run", str(experiment), "--db", str(db), "--smrbench", str(smrbench)]) == 0
    assert "16 of 16 trials already stored; running 0" in capsys.readouterr().err
    assert len(rows(db)) == 16


def test_dry_run_prints_commands_and_runs_nothing(tmp_path: Path, smrbench: Path, capsys) -> None:
    experiment, db = write(tmp_path, TINY), tmp_path / "r.db"
    assert (
        main(["run", str(experiment), "--db", str(db), "--dry-run", "--smrbench", str(smrbench)])
        == 0
    )
    out = capsys.readouterr()
    lines = out.out.strip().splitlines()
    assert len(lines) == 16
    assert lines[0].startswith(str(smrbench) + " ")
    assert all("--trials 1 --seed" in line and line.endswith("--json --quiet") for line in lines)
    assert "--duration 0.05" in lines[0] and "--key-range 512" in lines[0]
    assert "16 commands" in out.err
    assert not db.exists()


def test_dry_run_omits_stored_trials(tmp_path: Path, fake_smrbench: Path, capsys) -> None:
    experiment = write(tmp_path, TINY.replace("trials = 2", "trials = 1"))
    db = tmp_path / "r.db"
    assert main(["run", str(experiment), "--db", str(db), "--smrbench", str(fake_smrbench)]) == 0
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM runs WHERE threads = 2")
    capsys.readouterr()
    assert (
        main(
            ["run", str(experiment), "--db", str(db), "--dry-run", "--smrbench", str(fake_smrbench)]
        )
        == 0
    )
    out = capsys.readouterr()
    assert len(out.out.strip().splitlines()) == 4
    assert all("--threads 2" in line for line in out.out.strip().splitlines())
    assert "4 already stored" in out.err


def test_a_rebuilt_smrbench_measures_again_unless_stored_results_are_reused(
    tmp_path: Path, fake_smrbench: Path, capsys
) -> None:
    experiment = write(tmp_path, TINY.replace("trials = 2", "trials = 1"))
    db = tmp_path / "r.db"
    run = ["run", str(experiment), "--db", str(db), "--smrbench"]
    assert main([*run, str(fake_smrbench)]) == 0
    capsys.readouterr()
    # The same program again: nothing to do.
    assert main([*run, str(fake_smrbench)]) == 0
    assert "8 of 8 trials already stored" in capsys.readouterr().err
    # Rebuilt (other bytes): every configuration is measured again, the old rows kept.
    rebuilt = tmp_path / "rebuilt-smrbench"
    rebuilt.write_bytes(fake_smrbench.read_bytes() + b"# rebuilt\n")
    rebuilt.chmod(0o755)
    dry = main([*run, str(rebuilt), "--dry-run"])
    assert dry == 0 and len(capsys.readouterr().out.splitlines()) == 8
    assert main([*run, str(rebuilt), "--reuse-stored", "--dry-run"]) == 0
    assert capsys.readouterr().out == ""
    assert main([*run, str(rebuilt)]) == 0
    assert "ran 8 trials" in capsys.readouterr().err
    builds = rows(db, "SELECT build_id, COUNT(*) AS n FROM runs GROUP BY build_id")
    assert sorted(row["n"] for row in builds) == [8, 8] and all(row["build_id"] for row in builds)
    with Store(db, write=False) as store:
        assert len(store.runs("tiny")) == 8  # readers see one result per configuration


def test_dry_run_works_without_a_build(tmp_path: Path, capsys) -> None:
    experiment = write(tmp_path, TINY)
    assert (
        main(
            [
                "run",
                str(experiment),
                "--db",
                str(tmp_path / "r.db"),
                "--dry-run",
                "--smrbench",
                str(tmp_path / "missing"),
            ]
        )
        == 0
    )
    out = capsys.readouterr()
    assert len(out.out.strip().splitlines()) == 16
    assert "names are not checked" in out.err


def test_resume_runs_only_what_is_missing(tmp_path: Path, fake_smrbench: Path) -> None:
    experiment, db = write(tmp_path, TINY), tmp_path / "r.db"
    assert main(["run", str(experiment), "--db", str(db), "--smrbench", str(fake_smrbench)]) == 0
    assert len(fake_calls(fake_smrbench)) == 16
    with sqlite3.connect(db) as connection:  # as if interrupted after 13 results
        connection.execute("DELETE FROM runs WHERE id > 13")
    assert main(["run", str(experiment), "--db", str(db), "--smrbench", str(fake_smrbench)]) == 0
    assert len(fake_calls(fake_smrbench)) == 16 + 3
    assert len(rows(db)) == 16
    assert len({r["config_key"] for r in rows(db)}) == 16


def test_failures_are_recorded_and_listed(tmp_path: Path, fake_smrbench: Path, capsys) -> None:
    experiment = write(
        tmp_path,
        """
[experiment]
name = "failing"
[grid]
reclaimer = ["none", "crash", "garbage", "invalid", "badinput"]
[fixed]
duration = 0.1
""",
    )
    db = tmp_path / "r.db"
    assert main(["run", str(experiment), "--db", str(db), "--smrbench", str(fake_smrbench)]) == 1
    err = capsys.readouterr().err
    failures = {r["kind"]: r for r in rows(db, "SELECT * FROM failures")}
    assert set(failures) == {"exit", "invalid_json", "not_validated", "bad_input"}
    assert "segmentation fault" in failures["exit"]["stderr"]
    assert failures["exit"]["exit_code"] == 1
    assert "key sum 10 != expected 12" in failures["not_validated"]["message"]
    assert "4 failed" in err and err.count("FAILED ") == 4 and "command: " in err
    assert [r["reclaimer"] for r in rows(db)] == ["none"]  # invalid results are not stored


def test_timeout_kills_the_trial(tmp_path: Path, fake_smrbench: Path, capsys) -> None:
    experiment = write(tmp_path, '[experiment]\nname = "t"\n[grid]\nreclaimer = ["hang"]\n')
    db = tmp_path / "r.db"
    started = time.monotonic()
    assert (
        main(
            [
                "run",
                str(experiment),
                "--db",
                str(db),
                "--smrbench",
                str(fake_smrbench),
                "--timeout",
                "1",
            ]
        )
        == 1
    )
    assert time.monotonic() - started < 10
    (failure,) = rows(db, "SELECT * FROM failures")
    assert failure["kind"] == "timeout" and "timed out after 1 s" in failure["message"]
    pid = fake_calls(fake_smrbench)[0]["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_default_timeouts_fit_the_trial() -> None:
    stamp = load_experiment(Path(__file__).parents[2] / "experiments" / "stamp.toml", "paper")
    quick = runner.Job("e", {"duration": 2}, 0, 1)
    assert runner.default_timeout(quick) == 100.0
    stamp_quick = runner.Job("e", {"app": "vacation-high"}, 0, 1, benchmark="stamp")
    stamp_paper = runner.Job("e", {"app": "vacation-high++"}, 0, 1, benchmark="stamp")
    # A paper-size Vacation trial takes 80-120 s at one client on 2 cores.
    assert runner.default_timeout(stamp_paper) == runner.PAPER_SIZE_STAMP_TIMEOUT_S >= 600
    assert runner.default_timeout(stamp_quick) < 120
    assert all(app.endswith("++") for app in stamp.grid["app"])


@pytest.mark.parametrize(
    ("signum", "said"),
    [
        (signal.SIGINT, "interrupted"),
        (signal.SIGTERM, "stopped by SIGTERM"),
        (signal.SIGHUP, "stopped by SIGHUP"),
    ],
)
def test_a_stopped_run_stops_its_trial_and_leaves_a_consistent_store(
    tmp_path: Path, fake_smrbench: Path, signum: int, said: str
) -> None:
    experiment = write(
        tmp_path,
        """
[experiment]
name = "interrupted"
[grid]
reclaimer = ["none", "debra", "hang", "none"]
threads = [1, 2]
""",
    )
    db = tmp_path / "r.db"
    # A SIGINT this process ignores (pytest run as `cmd &` from a script: the shell ignores
    # SIGINT and SIGQUIT in background jobs) would stay ignored in smrlab, whose Python then
    # installs no KeyboardInterrupt handler; a user's smrlab gets Ctrl-C's default. So smrlab
    # starts from a Python that restores it (exec keeps a default disposition) rather than from
    # a preexec_fn, which is unsafe in a process with threads.
    default_sigint = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            default_sigint,
            "-m",
            "smrlab",
            "run",
            str(experiment),
            "--db",
            str(db),
            "--smrbench",
            str(fake_smrbench),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # wait until the hanging trial runs
        if any("hang" in call["args"] for call in fake_calls(fake_smrbench)):
            break
        time.sleep(0.05)
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 128 + signum
    assert said in err and "resume" in err
    assert len(rows(db)) == 4  # none and debra at 1 and 2 threads, all committed
    hang_pid = next(c["pid"] for c in fake_calls(fake_smrbench) if "hang" in c["args"])
    with pytest.raises(ProcessLookupError):
        os.kill(hang_pid, 0)


def test_a_second_run_on_one_store_is_refused_until_the_first_ends(
    tmp_path: Path, fake_smrbench: Path, capsys
) -> None:
    hanging = write(
        tmp_path, '[experiment]\nname = "first"\n[grid]\nreclaimer = ["hang"]\n', "a.toml"
    )
    quick = write(
        tmp_path, '[experiment]\nname = "second"\n[grid]\nreclaimer = ["none"]\n', "b.toml"
    )
    db = tmp_path / "r.db"
    second = ["run", str(quick), "--db", str(db), "--smrbench", str(fake_smrbench)]
    first = subprocess.Popen(
        [sys.executable, "-m", "smrlab", "run", str(hanging), "--db", str(db), *second[4:]],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not fake_calls(fake_smrbench) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake_calls(fake_smrbench), first.communicate()[1]
    assert main(second) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"another smrlab run (pid {first.pid})" in err
    assert len(fake_calls(fake_smrbench)) == 1, "the refused run started a trial"
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=30)
    assert main(second) == 0  # the lock went with the first run
    assert len(rows(db)) == 1


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ('reclaimer = ["debra", "hazard"]', "reclaimer hazard not in this smrbench (available: "),
        ('alloc = ["tbbmalloc"]', "alloc tbbmalloc not in this smrbench"),
        ('ds = ["skiplist"]', "ds skiplist not in this smrbench"),
    ],
)
def test_unknown_names_are_bad_input(
    tmp_path: Path, fake_smrbench: Path, capsys, grid: str, message: str
) -> None:
    experiment = write(tmp_path, f'[experiment]\nname = "n"\n[grid]\n{grid}\n')
    assert (
        main(
            [
                "run",
                str(experiment),
                "--db",
                str(tmp_path / "r.db"),
                "--smrbench",
                str(fake_smrbench),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert fake_calls(fake_smrbench) == []


def test_skip_unavailable_and_invalid_combinations(
    tmp_path: Path, fake_smrbench: Path, capsys
) -> None:
    experiment = write(
        tmp_path,
        """
[experiment]
name = "partial"
skip_unavailable = true
[grid]
ds = ["dgt_bst", "lazylist", "abtree"]
reclaimer = ["none", "debra", "hazard"]
""",
    )
    assert (
        main(
            [
                "run",
                str(experiment),
                "--db",
                str(tmp_path / "r.db"),
                "--smrbench",
                str(fake_smrbench),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "skipping ds abtree: not in this smrbench" in err
    assert "skipping reclaimer hazard" in err
    assert "skipping invalid combinations (smrbench --list): lazylist×debra" in err
    assert len(fake_calls(fake_smrbench)) == 3  # dgt_bst×none, dgt_bst×debra, lazylist×none


def test_option_missing_from_the_binary_is_bad_input(
    tmp_path: Path, fake_smrbench: Path, capsys
) -> None:
    experiment = write(tmp_path, '[experiment]\nname = "o"\n[fixed]\ntimeline = true\n')
    assert (
        main(
            [
                "run",
                str(experiment),
                "--db",
                str(tmp_path / "r.db"),
                "--smrbench",
                str(fake_smrbench),
            ]
        )
        == 2
    )
    assert "has no --timeline option yet" in capsys.readouterr().err


def test_garbage_series_files_are_referenced(tmp_path: Path, fake_smrbench: Path) -> None:
    experiment = write(
        tmp_path,
        '[experiment]\nname = "g"\n[grid]\nfree = ["batch", '
        '"amortized"]\n[fixed]\ngarbage_series = true\n',
    )
    db = tmp_path / "r.db"
    assert main(["run", str(experiment), "--db", str(db), "--smrbench", str(fake_smrbench)]) == 0
    files = rows(db, "SELECT * FROM files")
    assert len(files) == 2 and all(f["kind"] == "garbage_series" for f in files)
    assert all((tmp_path / f["path"]).is_file() for f in files)
    assert all(f["path"].startswith("files/g/") for f in files)


def test_missing_binary_message(tmp_path: Path, capsys, monkeypatch) -> None:
    experiment = write(tmp_path, TINY)
    monkeypatch.setenv("SMRBENCH", str(tmp_path / "nowhere" / "smrbench"))
    assert main(["run", str(experiment), "--db", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"smrlab: smrbench not found at {tmp_path / 'nowhere' / 'smrbench'}; "
        "build it with cmake --workflow --preset smrbench"
    )


def test_smrbench_option_beats_environment(
    tmp_path: Path, fake_smrbench: Path, monkeypatch
) -> None:
    experiment = write(tmp_path, '[experiment]\nname = "p"\n')
    monkeypatch.setenv("SMRBENCH", str(tmp_path / "nowhere"))
    assert (
        main(
            [
                "run",
                str(experiment),
                "--db",
                str(tmp_path / "r.db"),
                "--smrbench",
                str(fake_smrbench),
            ]
        )
        == 0
    )
    monkeypatch.setenv("SMRBENCH", str(fake_smrbench))
    assert main(["run", str(experiment), "--db", str(tmp_path / "s.db")]) == 0
    assert len(fake_calls(fake_smrbench)) == 2


def test_bad_experiment_file_exits_2_with_one_line(tmp_path: Path, capsys) -> None:
    experiment = write(tmp_path, '[experiment]\nname = "x"\n[grid]\nthreads = ["many"]\n')
    assert main(["run", str(experiment), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "is not a thread count" in err


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "smrlab"
    assert script.is_file(), "pip install -e python[test] provides the smrlab command"
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True)
    for command in ("run", "plot", "timeline", "report"):
        assert command in result.stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_plain_lines_otherwise(
    tmp_path: Path, fake_smrbench: Path
) -> None:
    experiment = load_experiment(write(tmp_path, TINY.replace("trials = 2", "trials = 1")))
    plan = make_plan(experiment, Smrbench(fake_smrbench))
    terminal = _Terminal()
    progress = make_progress(terminal)
    assert isinstance(progress, BarProgress)
    with Store(tmp_path / "r.db") as store:
        summary = Runner(store, fake_smrbench, progress).run(plan.jobs)
    assert summary.ran == 8 and not summary.failures
    shown = terminal.getvalue()
    assert "8/8" in shown and "\r" in shown and "Mops/s" in shown  # a redrawn bar
    assert isinstance(make_progress(io.StringIO()), LineProgress)


def _described_as(bench: Smrbench, edit: Any) -> Smrbench:
    """``bench`` with its own option description (a copy of smrlab's snapshot) edited: a build
    other than the checkout's, with other ranges or without an option."""
    from smrlab.options import load_description

    rows = copy.deepcopy(load_description()["options"])
    edit(rows)
    bench.__dict__["listing"] = {**FAKE_LISTING, "options": rows}
    return bench


def test_a_grid_is_checked_against_the_binarys_own_description(
    tmp_path: Path, fake_smrbench: Path
) -> None:
    experiment = load_experiment(write(tmp_path, TINY))

    def fewer_threads(rows: list[dict]) -> None:
        next(row for row in rows if row["key"] == "threads")["maximum"] = 1

    with pytest.raises(UsageError) as refused:
        make_plan(experiment, _described_as(Smrbench(fake_smrbench), fewer_threads))
    assert f"threads (smrbench at {fake_smrbench}): expected a value in [1, 1], got '2'" in str(
        refused.value
    )

    def no_key_range(rows: list[dict]) -> None:
        rows[:] = [row for row in rows if row["key"] != "key_range"]

    with pytest.raises(UsageError, match="has no --key-range option yet"):
        make_plan(experiment, _described_as(Smrbench(fake_smrbench), no_key_range))
    assert make_plan(experiment, _described_as(Smrbench(fake_smrbench), lambda rows: None)).jobs


THREADTEST = """
[experiment]
name = "allocators"
description = "threadtest over block sizes"
benchmark = "threadtest"
[grid]
block_size = [16, 4096]
[fixed]
alloc = "glibc"
threads = 2
ops = 2000
trials = 2
"""

LAYOUT = """
[experiment]
name = "layout"
benchmark = "layout"
[grid]
block_size = [16, 48]
[fixed]
blocks = 256
"""


def test_threadtest_and_layout_run_store_and_resume(tmp_path: Path, smrbench: Path, capsys) -> None:
    db = tmp_path / "r.db"
    for text, name in ((THREADTEST, "t.toml"), (LAYOUT, "l.toml")):
        path = write(tmp_path, text, name)
        assert main(["run", str(path), "--db", str(db), "--smrbench", str(smrbench)]) == 0
    assert "0 failed" in capsys.readouterr().err
    threadtest = rows(db, "SELECT * FROM runs WHERE experiment = 'allocators'")
    assert len(threadtest) == 4
    for row in threadtest:
        assert row["benchmark"] == "threadtest" and row["ds"] is None
        assert row["block_size"] in (16, 4096) and row["objects"] == 0
        assert row["throughput"] > 0 and row["validated"] == 1
        command = json.loads(row["command"])
        assert command[1] == "threadtest" and "--seed" not in command
        assert json.loads(row["result_json"])["trials"][0]["pairs"] == 2 * 2000
    layout = rows(db, "SELECT * FROM runs WHERE experiment = 'layout'")
    assert sorted(row["block_size"] for row in layout) == [16, 48]
    for row in layout:
        assert row["benchmark"] == "layout" and row["throughput"] is None
        assert json.loads(row["command"])[1:2] == ["layout"]
    # Stored results are found again: nothing runs twice.
    path = write(tmp_path, THREADTEST, "t.toml")
    assert main(["run", str(path), "--db", str(db), "--smrbench", str(smrbench)]) == 0
    assert "4 of 4 trials already stored; running 0" in capsys.readouterr().err
    # Figure 3's form and the layout's, from what was stored.
    from smrlab.plots import build_plots

    with Store(db) as store:
        (figure,), _ = build_plots(store, "allocators")
        assert (figure.name, figure.kind) == ("threadtest-t2-o0", "threadtest")
        (line,) = figure.figure.axes[0].get_lines()[:1]
        assert list(line.get_xdata()) == [16, 4096]
        for size, y in zip((16, 4096), line.get_ydata(), strict=True):
            stored = sorted(r["throughput"] for r in threadtest if r["block_size"] == size)
            assert y == pytest.approx(sum(stored) / 2 / 1e6)  # the median of two trials
        names = [plot.name for plot in build_plots(store, "layout")[0]]
        assert names == ["layout-16B", "layout-48B"]
    # The report shows each command's numbers in its own table.
    from smrlab.report import write_report

    with Store(db) as store:
        page, _ = write_report(store, tmp_path / "report")
    text = page.read_text()
    assert "malloc/free pairs per second (median over trials)" in text
    assert "Address layout" in text and "collisions % shift 5" in text


STAMP = """
[experiment]
name = "stamp"
benchmark = "stamp"
[grid]
app = ["genome", "kmeans-high", "vacation-low"]
alloc = ["glibc", "jemalloc"]
threads = [1, 2]
[fixed]
trials = 2
"""


def test_the_stamp_experiment_runs_and_draws_figure_7_and_table_5(
    tmp_path: Path, smrbench: Path
) -> None:
    """Genome, Kmeans and Vacation at STAMP's simulator inputs, two allocators, 1 and 2 clients,
    2 trials: every trial stored and verified, one speedup figure per application, Table 5 in the
    report."""
    from smrlab import stamp_plots
    from smrlab.plots import build_plots
    from smrlab.report import write_report

    db = tmp_path / "r.db"
    path = write(tmp_path, STAMP, "stamp.toml")
    assert main(["run", str(path), "--db", str(db), "--smrbench", str(smrbench)]) == 0
    stored = rows(db, "SELECT * FROM runs WHERE experiment = 'stamp'")
    assert len(stored) == 3 * 2 * 2 * 2
    for row in stored:
        assert row["benchmark"] == "stamp" and row["ds"] is None and row["validated"] == 1
        command = json.loads(row["command"])
        assert command[1] == "stamp" and "--seed" not in command
        result = json.loads(row["result_json"])
        assert (result["app"], result["application"]) in (
            ("genome", "genome"),
            ("kmeans-high", "kmeans"),
            ("vacation-low", "vacation"),
        )
        # Vacation's and Genome's tasks are their commits; Kmeans's its point transactions.
        tasks = result["trials"][0]["tasks"]
        assert result["stm"]["commits"] >= tasks > 0
        assert (result["stm"]["commits"] == tasks) == (result["application"] != "kmeans")
        assert row["throughput"] == pytest.approx(result["trials"][0]["tasks"] / result["seconds"])
    with Store(db) as store:
        plots, _ = build_plots(store, "stamp")
        runs = store.runs("stamp")
    assert [(p.name, p.kind) for p in plots] == [
        ("stamp-genome", "stamp"),
        ("stamp-kmeans-high", "stamp"),
        ("stamp-vacation-low", "stamp"),
    ]
    # A speedup is over the allocator's own one-thread median, so the one-thread trials bracket 1
    # whatever the timing noise (a tolerance around 1 failed in CI on 3 ms trials 5x apart).
    times = stamp_plots.times(runs)
    for by_allocator in times.values():
        for by_threads in by_allocator.values():
            assert sorted(by_threads) == [1, 2]
            one_thread = stamp_plots.speedups(by_threads)[1]
            assert min(one_thread) <= 1.0 <= max(one_thread)
    table5 = stamp_plots.best_and_worst(runs)
    assert sorted(row.app for row in table5) == ["genome", "kmeans-high", "vacation-low"]
    for row in table5:
        assert {row.best, row.worst} == {"glibc", "jemalloc"} and row.gain_pct >= 0
        assert row.threads in (1, 2)
    with Store(db) as store:
        page, _ = write_report(store, tmp_path / "report")
    assert "Best and worst allocator per application (Table 5)" in page.read_text()


def test_stamp_speedups_and_table_5_from_known_times() -> None:
    """Figure 7's normalization and Table 5's pick on made-up times: the gain is worst / best - 1
    at the thread count where it is largest, each allocator against its own one thread."""
    from smrlab import stamp_plots

    def run(alloc: str, threads: int, seconds: float) -> dict:
        config = {"app": "vacation-high", "threads": threads, "trials": 1}
        return {
            "benchmark": "stamp",
            "alloc": alloc,
            "result": {"config": config, "seconds": seconds},
        }

    runs = [
        run("glibc", 1, 10.0),
        run("glibc", 2, 5.0),
        run("glibc", 4, 4.0),
        run("jemalloc", 1, 8.0),
        run("jemalloc", 2, 6.0),
        run("jemalloc", 4, 2.0),
        run("tcmalloc", 2, 5.5),  # no one-thread run: no speedup line, still in Table 5
    ]
    by_allocator = stamp_plots.times(runs)[("vacation-high",)]
    assert stamp_plots.speedups(by_allocator["glibc"]) == {1: [1.0], 2: [2.0], 4: [2.5]}
    assert stamp_plots.speedups(by_allocator["jemalloc"]) == {1: [1.0], 2: [8 / 6], 4: [4.0]}
    assert stamp_plots.speedups(by_allocator["tcmalloc"]) == {}
    (row,) = stamp_plots.best_and_worst(runs)
    assert (row.best, row.worst, row.threads) == ("jemalloc", "glibc", 4)
    assert row.gain_pct == pytest.approx(100.0)
    (figure,) = stamp_plots.figures(runs)
    labels = [line.get_label() for line in figure.figure.axes[0].get_lines()]
    assert "tcmalloc" not in labels


def test_the_stm_experiments_run_and_draw_the_papers_figures_and_tables(
    tmp_path: Path, smrbench: Path
) -> None:
    """experiments/stm_{list,hash_set,rbtree}.toml at a shortened quick size: two allocators,
    0.05 s, 2 trials; Figure 4 per structure and shift, Figure 6 for the list, Tables 3 and 4."""
    from smrlab.plots import build_plots
    from smrlab.report import write_report
    from smrlab.stm_plots import abort_rows, best_and_worst

    db = tmp_path / "r.db"
    for name in ("stm_list", "stm_hash_set", "stm_rbtree"):
        text = (Path(__file__).resolve().parents[2] / "experiments" / f"{name}.toml").read_text()
        text = re.sub(r"(?m)^alloc = \[.*\]$", 'alloc = ["glibc", "jemalloc"]', text)
        text = re.sub(r"(?m)^duration = 0\.5$", "duration = 0.05", text)
        text = re.sub(r"(?m)^trials = 3$", "trials = 2", text)
        path = write(tmp_path, text, f"{name}.toml")
        assert main(["run", str(path), "--db", str(db), "--smrbench", str(smrbench)]) == 0
    with Store(db) as store:
        plots = {name: build_plots(store, name)[0] for name in store.experiments()}
        runs = store.runs("stm_list")
    assert [p.name for p in plots["stm_list"]] == [
        "stm-throughput-stm_list-shift4",
        "stm-throughput-stm_list-shift5",
        "stm-shift-stm_list",
    ]
    assert [p.name for p in plots["stm_hash_set"]] == ["stm-throughput-stm_hash_set-shift5"]
    assert [p.name for p in plots["stm_rbtree"]] == ["stm-throughput-stm_rbtree-shift5"]
    # Figure 4's points are the medians of the stored trials.
    figure = plots["stm_list"][1].figure
    bars = next(c for c in figure.axes[0].containers if c.get_label() == "glibc")
    glibc = bars.lines[0]  # the errorbar's data line
    for threads, y in zip(glibc.get_xdata(), glibc.get_ydata(), strict=True):
        stored = [
            r["throughput"] / 1e6
            for r in runs
            if r["alloc"] == "glibc"
            and r["threads"] == threads
            and r["result"]["config"]["ort_shift"] == 5
        ]
        assert len(stored) == 2 and y == pytest.approx(sum(stored) / 2)
    # Table 3: one row per structure and shift, at the thread count of the top throughput.
    best = best_and_worst(runs)
    assert [row.title.split(" · ")[-1] for row in best] == ["shift 4", "shift 5"]
    for row in best:
        assert {row.best, row.worst} == {"glibc", "jemalloc"} and row.speedup_pct >= 0
    # Table 4: every allocator x threads x shift, with the transactions of 2 trials.
    aborts = abort_rows(runs)
    assert len(aborts) == 2 * 2 * 2 and all(row.trials == 2 for row in aborts)
    assert all(row.aborted_pct == 0 for row in aborts if row.threads == 1)
    with Store(db) as store:
        text = write_report(store, tmp_path / "report")[0].read_text()
    assert "the paper's Table 3" in text and "the paper's Table 4" in text
    # The three under the study's heading, which comes once, before them.
    heading = text.index('<h2 id="stm">')
    assert text.count('<h2 id="stm">') == 1
    assert all(text.index(f'id="exp-{name}"') > heading for name in ("stm_list", "stm_rbtree"))


def test_a_signal_while_a_trial_starts_stops_that_trial(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C between Popen's fork and its return: without holding the signal until the
    # process object exists, KeyboardInterrupt left smrbench running in its own session.
    started: list[int] = []
    real_popen = subprocess.Popen

    def popen_then_interrupted(*args: Any, **kwargs: Any) -> subprocess.Popen:
        process = real_popen(*args, **kwargs)
        started.append(process.pid)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # where a handler acting at once would raise
        return process

    monkeypatch.setattr(runner.subprocess, "Popen", popen_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        runner._execute(["sleep", "30"], timeout=60, outputs=[])
    monkeypatch.undo()
    with pytest.raises(ProcessLookupError):
        os.kill(started[0], 0)
