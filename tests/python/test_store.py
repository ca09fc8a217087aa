"""The result store: insert, resume, no duplicates, failures, referenced files."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from conftest import add_fake_run, fake_result
from smrlab.errors import UsageError
from smrlab.provenance import Identity
from smrlab.store import SCHEMA_VERSION, Failure, Store

K1 = '{"reclaimer":"debra","trial":0}'
K2 = '{"reclaimer":"debra","trial":1}'


def test_insert_and_query_columns(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        result = fake_result(reclaimer="qsbr", free="amortized", threads=8, throughput=2.5e6)
        assert store.add_run("e", '{"trial":0}', 0, result, ["smrbench", "--json"], 1.5)
        (run,) = store.runs("e")
    assert (run["reclaimer"], run["free"], run["threads"], run["throughput"]) == (
        "qsbr",
        "amortized",
        8,
        2.5e6,
    )
    assert run["insert_pct"] == 50 and run["validated"] == 1 and run["trial"] == 0
    assert run["result"]["config"]["reclaimer"] == "qsbr"
    # The columns people query need no quoting.
    db = sqlite3.connect(tmp_path / "r.db")
    assert db.execute(
        "SELECT reclaimer, free, insert_pct, erase_pct, peak_rss_bytes, "
        "garbage_peak, free_seconds, validated, timestamp FROM runs"
    ).fetchone()


def test_no_duplicates_and_resume(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        assert store.add_run("e", K1, 0, fake_result(), [])
        assert not store.add_run("e", K1, 0, fake_result(throughput=5.0), [])
        assert store.add_run("other", K1, 0, fake_result(), [])  # keys are per experiment
        assert store.stored_keys("e") == {K1}
        assert store.has_run("e", K1) and not store.has_run("e", K2)
        assert len(store.runs("e")) == 1 and store.runs("e")[0]["throughput"] == 1e6
    with Store(tmp_path / "r.db") as store:  # reopened: still there
        assert store.stored_keys("e") == {K1}
        assert store.experiments() == ["e", "other"]


def test_failures_recorded_replaced_and_cleared(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        failure = Failure("e", K1, 0, "timeout", "timed out after 5 s", None, "err", "", ["x"])
        store.add_failure(failure)
        store.add_failure(Failure("e", K1, 0, "exit", "exit status 1", 1, "boom", "", ["x"]))
        (row,) = store.failures("e")
        assert row["kind"] == "exit" and row["stderr"] == "boom"
        store.add_run("e", K1, 0, fake_result(), [])
        assert store.failures("e") == []


def test_files_are_referenced_relative_to_the_store(tmp_path: Path) -> None:
    data = tmp_path / "files" / "e" / "a.garbage"
    data.parent.mkdir(parents=True)
    data.write_text("x")
    with Store(tmp_path / "r.db") as store:
        store.add_run("e", K1, 0, fake_result(), [], files={"garbage_series": data})
        stored = store.db.execute("SELECT path FROM files").fetchone()[0]
        assert stored == "files/e/a.garbage"
        (entry,) = store.files("e", "garbage_series")
        assert entry["path"] == tmp_path / "files" / "e" / "a.garbage" and entry["exists"]


def test_fake_runs_helper(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        add_fake_run(store, threads=1)
        add_fake_run(store, threads=2)
        assert len(store.runs()) == 2


def test_pool_columns_and_status(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        add_fake_run(store, trial=0, pool_nodes=2000, on_empty="spin", status="pool_exhausted")
        add_fake_run(store, trial=0, pool_nodes=0)
        add_fake_run(store, trial=1)  # a result from before the pool: no pool fields
    db = sqlite3.connect(tmp_path / "r.db")
    rows = db.execute("SELECT pool_nodes, on_empty, status FROM runs ORDER BY id").fetchall()
    assert rows == [(2000, "spin", "pool_exhausted"), (0, None, "ok"), (0, None, "ok")]


def test_the_stall_column_tells_a_holding_staller_apart(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        add_fake_run(store, trial=0)
        add_fake_run(store, trial=1, stall=True)
        add_fake_run(store, trial=2, stall=True, stall_hold=True)
    db = sqlite3.connect(tmp_path / "r.db")
    rows = db.execute("SELECT stall FROM runs ORDER BY id").fetchall()
    assert rows == [(0,), (1,), (2,)]


# The runs table of store schema 1, before the pool columns.
SCHEMA_1_RUNS = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY, experiment TEXT NOT NULL, config_key TEXT NOT NULL, ds TEXT,
    reclaimer TEXT, free TEXT, alloc TEXT, threads INTEGER, key_range INTEGER,
    insert_pct INTEGER, erase_pct INTEGER, contains_pct INTEGER, duration REAL, stall INTEGER,
    seed INTEGER, trial INTEGER NOT NULL, throughput REAL, peak_rss_bytes INTEGER,
    garbage_peak INTEGER, free_seconds REAL, epochs INTEGER, validated INTEGER NOT NULL,
    elapsed_s REAL, command TEXT NOT NULL, timestamp TEXT NOT NULL, result_json TEXT NOT NULL,
    UNIQUE (experiment, config_key)
);
"""


def test_a_schema_1_store_is_migrated_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(SCHEMA_1_RUNS)
    old.execute(
        "INSERT INTO runs (experiment, config_key, ds, reclaimer, trial, throughput, validated, "
        "command, timestamp, result_json) VALUES ('e', ?, 'dgt_bst', 'debra', 0, 5.0, 1, '[]', "
        "'2026-01-01T00:00:00+00:00', ?)",
        (K1, json.dumps(fake_result())),
    )
    old.execute("PRAGMA user_version=1")
    old.commit()
    old.close()
    for opening in range(2):  # a second open finds nothing left to migrate
        with Store(path) as store:
            run = store.runs("e")[0]
            assert (run["throughput"], run["pool_nodes"], run["on_empty"], run["status"]) == (
                5.0,
                0,
                None,
                "ok",
            )
            added = store.add_run("e", K2, 1, fake_result(pool_nodes=64, on_empty="fail"), [])
            assert added == (opening == 0)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with Store(path) as store:
        assert [run["on_empty"] for run in store.runs("e")] == [None, "fail"]


# The columns each schema added, newest last.
ADDED_COLUMNS = {
    3: ("exec_time_per_op_ns", "cpu_time_per_op_ns", "cpus"),
    4: ("benchmark", "block_size", "objects"),
    5: ("freed", "remote_frees"),
}


def take_back(path: Path, version: int) -> None:
    """Turns today's store at `path` into one of schema `version` (2 or later)."""
    old = sqlite3.connect(path)
    if version < 6:
        for table in ("runs", "failures", "files"):
            _drop_identity(old, table)
    for added, columns in ADDED_COLUMNS.items():
        for column in columns if added > version else ():
            old.execute(f"ALTER TABLE runs DROP COLUMN {column}")
    old.execute(f"PRAGMA user_version={version}")
    old.commit()
    old.close()


def _drop_identity(db: sqlite3.Connection, table: str) -> None:
    """Makes `table` again as schema 5 had it: no identity columns, nor in its unique key."""
    (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    lines = [
        line
        for line in sql.splitlines()
        if not line.strip().startswith(("machine_id ", "build_id "))
    ]
    sql = "\n".join(lines).replace(", machine_id, build_id", "")
    sql = re.sub(r'^CREATE TABLE (IF NOT EXISTS )?"?\w+"? \(', f"CREATE TABLE {table}_5 (", sql)
    columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
    kept = ", ".join(c for c in columns if c not in ("machine_id", "build_id"))
    db.execute(sql)
    db.execute(f"INSERT INTO {table}_5 ({kept}) SELECT {kept} FROM {table}")
    db.execute(f"DROP TABLE {table}")
    db.execute(f"ALTER TABLE {table}_5 RENAME TO {table}")


def test_a_schema_2_store_gains_harts_measures_from_its_stored_json(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Store(path) as store:
        store.add_run("e", K1, 0, fake_result(threads=4, throughput=2e6), [])
    take_back(path, 2)
    with Store(path) as store:
        run = store.runs("e")[0]
        # The median trial ran 2e6 operations in 1 s on 4 threads.
        assert run["exec_time_per_op_ns"] == pytest.approx(500.0)
        assert run["cpu_time_per_op_ns"] == pytest.approx(2000.0)
        assert run["cpus"] is None  # not recorded before schema 3
        store.add_run("e", K2, 1, fake_result(threads=2, throughput=1e6), [])
        assert store.runs("e")[1]["cpus"] == 4
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_schema_3_store_labels_its_runs_as_the_set_benchmark(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Store(path) as store:
        store.add_run("e", K1, 0, fake_result(throughput=2e6), [])
    take_back(path, 3)
    with Store(path) as store:
        run = store.runs("e")[0]
        assert (run["benchmark"], run["block_size"], run["throughput"]) == ("set", None, 2e6)
        threadtest = {
            "benchmark": "threadtest",
            "config": {"alloc": "glibc", "threads": 2, "block_size": 16, "objects": 0},
            "throughput_ops_per_s": 5e7,
            "validated": True,
        }
        assert store.add_run("t", K1, 0, threadtest, [])
        run = store.runs("t")[0]
        assert (run["benchmark"], run["block_size"], run["objects"]) == ("threadtest", 16, 0)
        assert run["ds"] is None
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_schema_4_store_gains_the_freed_column_and_counted_no_remote_frees(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    with Store(path) as store:
        store.add_run("e", K1, 0, fake_result(), [])
    take_back(path, 4)
    with Store(path) as store:
        run = store.runs("e")[0]
        assert (run["freed"], run["remote_frees"]) == (9, None)
        store.add_run("e", K2, 1, fake_result(remote_frees=7), [])
        assert (store.runs("e")[1]["freed"], store.runs("e")[1]["remote_frees"]) == (9, 7)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


HERE = Identity("m1", "b1", {"cpu_model": "x"}, {"version": "1"})
REBUILT = Identity("m1", "b2", {"cpu_model": "x"}, {"version": "1"})


def test_a_schema_5_store_keeps_its_runs_under_an_unknown_identity(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Store(path) as store:
        store.add_run("e", K1, 0, fake_result(throughput=2e6), [], files={"timeline": path})
        store.add_failure(Failure("e", K2, 1, "exit", "exit status 1", 1, "", "", ["x"]))
    take_back(path, 5)
    with Store(path) as store:
        (run,) = store.runs("e")
        assert (run["machine_id"], run["build_id"], run["throughput"]) == ("", "", 2e6)
        assert len(store.files("e")) == 1 and len(store.failures("e")) == 1
        # Stored before provenance: this binary on this machine measures it again.
        assert store.stored_keys("e", HERE) == set() and store.stored_keys("e") == {K1}
        assert store.add_run("e", K1, 0, fake_result(throughput=3e6), [], identity=HERE)
        (run,) = store.runs("e")  # the newest result of the configuration
        assert (run["machine_id"], run["throughput"]) == ("m1", 3e6)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 2  # the old one is kept


def test_a_rebuilt_binary_stores_beside_the_old_build_and_readers_see_the_newest(
    tmp_path: Path,
) -> None:
    with Store(tmp_path / "r.db") as store:
        timeline = tmp_path / "t1"
        assert store.add_run("e", K1, 0, fake_result(throughput=1.0), [], identity=HERE)
        assert not store.add_run("e", K1, 0, fake_result(throughput=9.0), [], identity=HERE)
        assert store.stored_keys("e", REBUILT) == set()
        assert store.add_run(
            "e", K1, 0, fake_result(throughput=2.0), [], identity=REBUILT, files={"t": timeline}
        )
        assert store.stored_keys("e", HERE) == store.stored_keys("e", REBUILT) == {K1}
        assert [run["throughput"] for run in store.runs("e")] == [2.0]
        (file,) = store.files("e")  # joined with its own build's row, not duplicated
        assert file["build_id"] == "b2"
        (ident,) = store.identities("e")
        assert (ident["build_id"], ident["runs"]) == ("b2", 1)
        store.add_failure(Failure("e", K2, 1, "exit", "m", 1, "", "", ["x"], HERE))
        store.add_failure(Failure("e", K2, 1, "exit", "m", 1, "", "", ["x"], REBUILT))
        assert len(store.failures("e")) == 2  # one per build
        store.add_run("e", K2, 1, fake_result(), [], identity=HERE)
        assert store.failures("e") == []  # a success clears the job's failures on every build


def test_a_store_from_a_newer_smrlab_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=99")
    db.commit()
    db.close()
    with pytest.raises(UsageError, match="schema 99"):
        Store(path)
