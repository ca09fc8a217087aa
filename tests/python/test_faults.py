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


def run_smrlab(
    *argv: str, before: tuple[str, ...] | list[str] = (), mpl_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`smrlab argv` in a process of its own, after `before` (setpriv, prlimit), both streams
    captured; matplotlib's cache in `mpl_dir` (a user with no home of its own needs one)."""
    env = dict(os.environ) if mpl_dir is None else {**os.environ, "MPLCONFIGDIR": str(mpl_dir)}
    return subprocess.run(
        [*before, *SMRLAB, *argv], check=False, capture_output=True, text=True, env=env, timeout=300
    )


def without_wal_files(db: Path) -> Path:
    """The store as its last connection leaves it: no -wal or -shm file beside it."""
    for leftover in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        leftover.unlink(missing_ok=True)
    return db


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
    # Refused before anything is drawn, naming what is in the way.
    one_line_refusal(capsys, ["plot", "--db", str(db), "--out", out], "plain is not a directory")
    one_line_refusal(capsys, ["report", "--db", str(db), "--out", out], "plain is not a directory")
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
    db = without_wal_files(store_with_runs(shared / "store" / "r.db"))  # WAL mode
    before = db.read_bytes()
    (shared / "store").chmod(0o555)
    db.chmod(0o444)
    shared.chmod(0o777)  # the outputs go here
    mpl = shared / "mpl"
    try:
        for command in ("plot", "report"):
            out = str(shared / command)
            done = run_smrlab(command, "--db", str(db), "--out", out, before=prefix, mpl_dir=mpl)
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
        argv = ("run", str(experiment), "--db", str(db), "--smrbench", str(stand_in))
        done = run_smrlab(*argv, before=prefix, mpl_dir=mpl)
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
        done = run_smrlab(
            "run",
            str(experiment),
            *where,
            before=[prlimit, "--nproc=40", "--", *prefix],
            mpl_dir=shared / "mpl",
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


# ---- the second fault probe's cases ---------------------------------------------------


def test_a_window_bound_that_is_not_a_finite_number_is_one_line(tmp_path: Path, capsys) -> None:
    path = write_timeline(tmp_path / "x.timeline", [(0, "batch_free", 1, 2, 3)], threads=1)
    for option, value in (("--start-ms", "nan"), ("--end-ms", "inf"), ("--end-ms", "1e300")):
        one_line_refusal(capsys, ["timeline", str(path), option, value], option)
    assert not (tmp_path / "x.timeline.png").exists()


def test_a_truncated_timeline_is_refused_as_truncated(tmp_path: Path, capsys) -> None:
    rows = [(0, "batch_free", 10 * i, 10 * i + 5, 3) for i in range(50)]
    path = write_timeline(tmp_path / "x.timeline", rows, threads=1)
    whole = path.read_bytes()
    last_row = whole.rindex(b"\n", 0, len(whole) - 1) + 1
    # Inside the last row's number, at a row's end, in the middle of the file.
    for cut in (len(whole) - 2, last_row, len(whole) // 2):
        path.write_bytes(whole[:cut])
        one_line_refusal(
            capsys, ["timeline", str(path), "--out", str(tmp_path / "x.png")], "truncated"
        )
    assert not (tmp_path / "x.png").exists()


def test_two_names_of_one_store_take_one_lock(tmp_path: Path) -> None:
    from smrlab.errors import UsageError
    from smrlab.lock import exclusive_run

    (tmp_path / "store").mkdir()
    db = tmp_path / "store" / "r.db"
    alias = tmp_path / "alias.db"
    alias.symlink_to(db)
    with exclusive_run(db):
        for other in (alias, tmp_path / "store" / ".." / "store" / "r.db"):
            with pytest.raises(UsageError, match="another smrlab run"), exclusive_run(other):
                pass


def test_an_empty_path_is_one_line(tmp_path: Path, capsys) -> None:
    db = str(store_with_runs(tmp_path / "r.db"))
    for argv in (
        ["plot", "--db", ""],
        ["report", "--db", db, "--out", ""],
        ["run", "", "--dry-run"],
        ["timeline", ""],
    ):
        one_line_refusal(capsys, argv, "an empty path")


def test_an_output_in_the_way_is_refused_before_anything_is_drawn(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    import smrlab.plots
    import smrlab.report

    def must_not_draw(*args, **kwargs):
        raise AssertionError("drew before checking --out")

    monkeypatch.setattr(smrlab.report, "write_report", must_not_draw)
    monkeypatch.setattr(smrlab.plots, "plot_store", must_not_draw)
    db = str(store_with_runs(tmp_path / "r.db"))
    plain = tmp_path / "plain"
    plain.write_text("x")
    for command in ("report", "plot"):
        argv = [command, "--db", db, "--out", str(plain)]
        one_line_refusal(capsys, argv, f"--out {plain}: exists and is not a directory")
    timeline = write_timeline(tmp_path / "x.timeline", [(0, "batch_free", 1, 2, 3)], threads=1)
    argv = ["timeline", str(timeline), "--out", str(plain / "x.png")]
    one_line_refusal(capsys, argv, f"{plain} is not a directory")
    assert plain.read_text() == "x"


def test_a_smrbench_that_cannot_run_says_why(tmp_path: Path, capsys) -> None:
    experiment = tmp_path / "exp.toml"
    experiment.write_text(EXPERIMENT)
    run = ["run", str(experiment), "--db", str(tmp_path / "r.db"), "--smrbench"]
    one_line_refusal(capsys, [*run, str(experiment)], "is not executable")
    one_line_refusal(capsys, [*run, str(tmp_path)], "is not a regular file")
    one_line_refusal(capsys, [*run, str(tmp_path / "none")], "smrbench not found")
    assert not (tmp_path / "r.db").exists()


def test_a_quoted_number_in_an_experiment_is_called_a_string(tmp_path: Path, capsys) -> None:
    experiment = tmp_path / "exp.toml"
    experiment.write_text(EXPERIMENT + 'key_range = ["1000"]\n')
    argv = ["run", str(experiment), "--db", str(tmp_path / "r.db"), "--dry-run"]
    one_line_refusal(capsys, argv, "'1000' is a string (in quotes); write the number without")


def test_a_store_past_a_directory_it_may_not_enter_is_permission_denied(tmp_path: Path) -> None:
    prefix = reader_prefix()
    if prefix is None:
        pytest.skip("root, and no setpriv to run as nobody")
    shared = Path(tempfile.mkdtemp(prefix="smrlab-private-"))
    try:
        shared.chmod(0o777)  # the outputs go here
        (shared / "private").mkdir(mode=0o700)
        db = store_with_runs(shared / "private" / "r.db")
        argv = ("plot", "--db", str(db), "--out", str(shared / "plots"))
        done = run_smrlab(*argv, before=prefix, mpl_dir=shared / "mpl")
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "Permission denied" in done.stderr and "no result store" not in done.stderr
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_a_reader_leaves_nothing_beside_a_store_in_a_sticky_directory(tmp_path: Path) -> None:
    prefix = reader_prefix()
    if not prefix:
        pytest.skip("needs root and setpriv, to read as another user")
    shared = Path(tempfile.mkdtemp(prefix="smrlab-sticky-"))
    try:
        shared.chmod(0o1777)  # like /tmp: anyone makes files, only their owner removes them
        db = without_wal_files(store_with_runs(shared / "r.db"))
        db.chmod(0o644)
        experiment = shared / "exp.toml"
        experiment.write_text(EXPERIMENT)
        experiment.chmod(0o644)
        for argv in (
            ["plot", "--db", str(db), "--out", str(shared / "plots")],
            ["run", str(experiment), "--db", str(db), "--dry-run"],
        ):
            done = run_smrlab(*argv, before=prefix, mpl_dir=shared / "mpl")
            assert done.returncode == 0, done.stderr
            assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists(), argv
        with Store(db) as store:  # the owner writes on
            add_fake_run(store, "exp", reclaimer="ebr")
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_a_store_on_a_full_disk_is_not_called_foreign(tmp_path: Path, fake_smrbench: Path) -> None:
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        pytest.skip("needs prlimit")
    experiment = tmp_path / "exp.toml"
    experiment.write_text(EXPERIMENT)
    stored = without_wal_files(store_with_runs(tmp_path / "stored.db"))
    before = stored.read_bytes()
    # No file may grow past 4 KiB (Python ignores SIGXFSZ: the write fails with EFBIG), as on
    # a full disk: neither a new store nor the shared-memory file of one that exists.
    for db in (tmp_path / "new.db", stored):
        argv = ("run", str(experiment), "--db", str(db), "--smrbench", str(fake_smrbench))
        done = run_smrlab(*argv, before=[prlimit, "--fsize=4096"])
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
        assert "not a smrlab result store" not in done.stderr, done.stderr
        assert f"result store {db}" in done.stderr, done.stderr
    assert stored.read_bytes() == before


def test_a_dry_run_on_a_store_that_holds_no_results_lists_every_command(
    tmp_path: Path, fake_smrbench: Path, capsys
) -> None:
    db = tmp_path / "r.db"
    Store(db).close()  # made, as a first run makes it, and nothing stored
    experiment = tmp_path / "exp.toml"
    experiment.write_text(EXPERIMENT)
    argv = ["run", str(experiment), "--db", str(db), "--dry-run", "--smrbench", str(fake_smrbench)]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1 and "dry run of x: 1 commands" in err, err
