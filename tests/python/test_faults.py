"""smrlab on a shared server: every damaged, foreign or unwritable input is one line on stderr
and exit status 2 (no traceback), and nothing is written to a file smrlab was not asked to
write: a database that is not a smrlab store is left byte for byte as it was."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import FAKE_LISTING, REPO, add_fake_run, fake_result
from smrlab.cli import main
from smrlab.store import SCHEMA_VERSION, Store
from specfiles import write_timeline

SMRLAB = [sys.executable, "-m", "smrlab"]
EXPERIMENT = '[experiment]\nname = "x"\n[grid]\nreclaimer = ["none"]\n'


def one_line_refusal(capsys, argv: list[str], mentions: str) -> None:
    """`smrlab argv` exits 2 with one line naming ``mentions``, and no traceback."""
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's refusal
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1, err
    assert mentions in err, err
    assert "Traceback" not in err


def store_with_runs(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with Store(path) as store:
        add_fake_run(store, "exp", reclaimer="debra")
        add_fake_run(store, "exp", reclaimer="none")
    return path


def foreign_database(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)")
    db.execute("INSERT INTO accounts (owner) VALUES ('someone else')")
    db.commit()
    db.close()
    return path


def future_store(path: Path) -> Path:
    store_with_runs(path)
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    return path


def sqlite_file(path: Path, *statements: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return path


def foreign_runs_table(path: Path) -> Path:
    """Another program's: its own table named runs, and a user_version of its own."""
    return sqlite_file(path, "CREATE TABLE runs (id INTEGER, name TEXT)", "PRAGMA user_version=3")


def views_only(path: Path) -> Path:
    return sqlite_file(path, "CREATE VIEW answer AS SELECT 42")


def other_application(path: Path) -> Path:
    return sqlite_file(path, "PRAGMA application_id=1234")


def corrupted_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"SQLite format 2\0" + os.urandom(4096))
    return path


DAMAGED = {
    "corrupted": (corrupted_file, "not a smrlab result store"),
    "foreign": (foreign_database, "not a smrlab result store (it holds: accounts)"),
    "future": (future_store, f"schema {SCHEMA_VERSION + 1}"),
    "foreign_runs": (foreign_runs_table, "not a smrlab result store (it holds: runs)"),
    "views_only": (views_only, "not a smrlab result store (it holds: answer)"),
    "other_application": (other_application, "not a smrlab result store (it holds: none)"),
}


def commands(db: Path, tmp_path: Path, fake_smrbench: Path) -> dict[str, list[str]]:
    experiment = tmp_path / "exp.toml"
    experiment.write_text(EXPERIMENT)
    return {
        "run": ["run", str(experiment), "--db", str(db), "--smrbench", str(fake_smrbench)],
        "dry-run": ["run", str(experiment), "--db", str(db), "--dry-run"],
        "plot": ["plot", "--db", str(db), "--out", str(tmp_path / "plots")],
        "report": ["report", "--db", str(db), "--out", str(tmp_path / "report")],
    }


@pytest.mark.parametrize("damage", sorted(DAMAGED))
@pytest.mark.parametrize("command", ["run", "dry-run", "plot", "report"])
def test_a_file_that_is_not_a_store_is_refused_and_left_untouched(
    tmp_path: Path, fake_smrbench: Path, capsys, damage: str, command: str
) -> None:
    make, mentions = DAMAGED[damage]
    db = make(tmp_path / "store" / "r.db")
    argv = commands(db, tmp_path, fake_smrbench)[command]

    def files() -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in db.parent.iterdir()}

    before = files()
    one_line_refusal(capsys, argv, mentions)
    assert files() == before
    assert not (tmp_path / "plots").exists() and not (tmp_path / "report").exists()


def test_plot_report_and_dry_run_leave_a_store_unchanged(
    tmp_path: Path, fake_smrbench: Path, capsys
) -> None:
    db = store_with_runs(tmp_path / "r.db")
    before = db.read_bytes()
    for name in ("dry-run", "plot", "report"):
        assert main(commands(db, tmp_path, fake_smrbench)[name]) == 0, capsys.readouterr().err
        assert db.read_bytes() == before, name


def test_a_store_that_cannot_be_written_is_one_line(
    tmp_path: Path, fake_smrbench: Path, capsys
) -> None:
    # Its directory is a file: neither the store nor its lock can be made.
    (tmp_path / "plain").write_text("x")
    db = tmp_path / "plain" / "r.db"
    one_line_refusal(capsys, commands(db, tmp_path, fake_smrbench)["run"], "plain")


def test_an_output_that_cannot_be_written_is_one_line(
    tmp_path: Path, fake_smrbench: Path, capsys
) -> None:
    db = store_with_runs(tmp_path / "r.db")
    (tmp_path / "plain").write_text("x")
    out = str(tmp_path / "plain" / "out")
    one_line_refusal(capsys, ["plot", "--db", str(db), "--out", out], "Not a directory")
    one_line_refusal(capsys, ["report", "--db", str(db), "--out", out], "Not a directory")
    (tmp_path / "report" / "index.html").mkdir(parents=True)
    one_line_refusal(
        capsys,
        ["report", "--db", str(db), "--out", str(tmp_path / "report")],
        "it is a directory",
    )


def test_a_report_skips_a_damaged_stored_timeline(tmp_path: Path, capsys) -> None:
    db = tmp_path / "r.db"
    good, bad = write_timeline(tmp_path / "good.timeline"), tmp_path / "bad.timeline"
    bad.write_text('{"format":"smrlab-timeline","version":1}\nthread,kind\n1,2,3\n')
    with Store(db) as store:
        add_fake_run(store, "exp", reclaimer="debra")
        store.add_run(
            "exp",
            '{"k":"good","trial":0}',
            0,
            fake_result(),
            ["smrbench"],
            files={"timeline": good},
        )
        store.add_run(
            "exp", '{"k":"bad","trial":0}', 0, fake_result(), ["smrbench"], files={"timeline": bad}
        )
    assert main(["report", "--db", str(db), "--out", str(tmp_path / "report")]) == 0
    err = capsys.readouterr().err
    assert "skipping stored timeline" in err and "bad.timeline" in err
    page = (tmp_path / "report" / "index.html").read_text()
    assert 'id="timeline-0"' in page and 'id="timeline-1"' not in page
    # Named on the command line, the same file is the user's error.
    one_line_refusal(
        capsys,
        ["report", "--db", str(db), "--out", str(tmp_path / "r2"), "--timeline", str(bad)],
        "bad.timeline",
    )


def test_an_experiment_file_that_is_not_utf8_is_one_line(tmp_path: Path, capsys) -> None:
    experiment = tmp_path / "latin1.toml"
    experiment.write_bytes(EXPERIMENT.replace('"x"', '"caf\xe9"').encode("latin-1"))
    one_line_refusal(
        capsys, ["run", str(experiment), "--db", str(tmp_path / "r.db"), "--dry-run"], "UTF-8"
    )
    assert not (tmp_path / "r.db").exists()


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e300", "0", "-5", "abc", "604801"])
def test_a_timeout_that_is_no_number_of_seconds_is_one_line(
    tmp_path: Path, capsys, value: str
) -> None:
    experiment = tmp_path / "exp.toml"
    experiment.write_text(EXPERIMENT)
    one_line_refusal(
        capsys,
        ["run", str(experiment), "--db", str(tmp_path / "r.db"), "--timeout", value],
        "--timeout",
    )
    assert not (tmp_path / "r.db").exists()


# ---- a store smrlab may only read ---------------------------------------------------


def reader_prefix() -> list[str] | None:
    """Runs a command as a user who cannot write the store: root may write anything, so as
    root through setpriv as nobody; None if that cannot be done."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_plot_and_report_read_a_store_they_cannot_write(tmp_path: Path) -> None:
    prefix = reader_prefix()
    if prefix is None:
        pytest.skip("root, and no setpriv to run as nobody")
    # Not under tmp_path, whose parents nobody may enter.
    shared = Path(tempfile.mkdtemp(prefix="smrlab-readonly-"))
    (shared / "store").mkdir()
    db = store_with_runs(shared / "store" / "r.db")  # WAL mode, no -shm left
    for leftover in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        leftover.unlink(missing_ok=True)
    before = db.read_bytes()
    (shared / "store").chmod(0o555)
    db.chmod(0o444)
    shared.chmod(0o777)  # the outputs go here
    env = {**os.environ, "MPLCONFIGDIR": str(shared / "mpl")}
    try:
        for command in ("plot", "report"):
            done = subprocess.run(
                [*prefix, *SMRLAB, command, "--db", str(db), "--out", str(shared / command)],
                check=False,
                capture_output=True,
                text=True,
                env=env,
                timeout=300,
            )
            assert done.returncode == 0, done.stderr
            assert "Traceback" not in done.stderr
        assert db.read_bytes() == before
        assert (shared / "report" / "index.html").is_file()
        # Running into it is refused in one line: it cannot be written.
        experiment = shared / "exp.toml"
        experiment.write_text(EXPERIMENT)
        experiment.chmod(0o644)
        # A shell stand-in: nobody may not run the test's Python stand-in (its interpreter is
        # under root's home).
        (shared / "listing.json").write_text(json.dumps(FAKE_LISTING))
        stand_in = shared / "smrbench"
        stand_in.write_text(
            f'#!/bin/sh\ncase "$*" in *--list*) cat {shared / "listing.json"};;\n'
            '  *--help*) echo "  --reclaimer TEXT";; esac\nexit 0\n'
        )
        stand_in.chmod(0o755)
        done = subprocess.run(
            [
                *prefix,
                *SMRLAB,
                "run",
                str(experiment),
                "--db",
                str(db),
                "--smrbench",
                str(stand_in),
            ],
            check=False,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "cannot lock" in done.stderr, done.stderr
    finally:
        (shared / "store").chmod(0o755)
        shutil.rmtree(shared, ignore_errors=True)


# ---- the whole grid checked before anything runs -------------------------------------

REFUSED_GRIDS = {
    "restart_from_head": ('ds = ["hm_list", "dgt_bst"]\nrestart_from_head = [true]', "dgt_bst"),
    "queue_contains": ('ds = ["ms_queue"]\ninsert = [40, 50]\nerase = [50]', "contains"),
    "signal": ('reclaimer = ["nbr"]\nsignal = [10, 9]', "cannot be caught"),
}


@pytest.mark.parametrize("case", sorted(REFUSED_GRIDS))
def test_smrbench_checks_the_whole_grid_before_a_trial_runs(
    tmp_path: Path, smrbench: Path, capsys, case: str
) -> None:
    grid, mentions = REFUSED_GRIDS[case]
    experiment = tmp_path / "g.toml"
    experiment.write_text(f'[experiment]\nname = "g"\n[grid]\n{grid}\n[fixed]\nduration = 0.05\n')
    db = tmp_path / "r.db"
    argv = ["run", str(experiment), "--db", str(db), "--smrbench", str(smrbench)]
    one_line_refusal(capsys, argv, mentions)
    assert not db.exists(), "the store was made for a grid that cannot run"
    one_line_refusal(capsys, [*argv, "--dry-run"], "smrbench refuses 1 of 2 configurations")


def test_a_grid_beyond_the_process_limit_is_refused_before_it_runs(tmp_path: Path) -> None:
    # Root is not held to ulimit -u: smrlab runs as nobody, whose processes are its own only;
    # any other user's count would include whatever else that user runs.
    if os.geteuid() != 0:
        pytest.skip("runs as nobody, which needs root")
    prefix = reader_prefix()
    prlimit = shutil.which("prlimit")
    binary = Path(os.environ.get("SMRBENCH", REPO / "build/release/bench/smrbench"))
    if prefix is None or prlimit is None or not binary.is_file():
        pytest.skip("needs prlimit, a release smrbench, and setpriv when run as root")
    shared = Path(tempfile.mkdtemp(prefix="smrlab-nproc-"))
    shared.chmod(0o777)
    experiment = shared / "g.toml"
    experiment.write_text(EXPERIMENT.replace('["none"]', '["none"]\nthreads = [2, 64]'))
    experiment.chmod(0o644)
    where = ["--db", str(shared / "r.db"), "--smrbench", str(binary)]
    try:
        done = subprocess.run(
            [prlimit, "--nproc=40", "--", *prefix, *SMRLAB, "run", str(experiment), *where],
            check=False,
            capture_output=True,
            text=True,
            env={**os.environ, "MPLCONFIGDIR": str(shared / "mpl")},
            timeout=300,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "ulimit -u" in done.stderr, done.stderr
        assert not (shared / "r.db").exists()
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_a_directory_or_fifo_is_neither_a_store_nor_a_timeline(
    tmp_path: Path, fake_smrbench: Path, capsys
) -> None:
    experiment = tmp_path / "exp.toml"
    experiment.write_text(EXPERIMENT)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "dir").mkdir()
    for db in (fifo, tmp_path / "dir"):
        one_line_refusal(capsys, ["run", str(experiment), "--db", str(db), "--dry-run"], str(db))
        one_line_refusal(
            capsys,
            ["run", str(experiment), "--db", str(db), "--smrbench", str(fake_smrbench)],
            str(db),
        )
    one_line_refusal(capsys, ["timeline", str(fifo)], "not a regular file")
    db = str(store_with_runs(tmp_path / "r.db"))
    out = str(tmp_path / "report")
    one_line_refusal(capsys, ["report", "--db", db, "--out", out, "--timeline", str(fifo)], "fifo")
