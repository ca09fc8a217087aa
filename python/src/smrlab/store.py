"""The SQLite result store: one row per successful trial, failures apart, files referenced.

Each result is committed on its own, so an interrupted run leaves a consistent store and the
next run resumes where it stopped: ``(experiment, config_key, machine_id, build_id)`` is unique,
and a job whose key is stored for this machine and this smrbench binary is skipped
(smrlab.provenance). Readers see, per configuration, its newest result. The full smrbench
JSON is kept next to the columns people query, so a figure nobody planned for can still be
drawn from old results.

Column names avoid SQL keywords (``insert_pct`` rather than ``insert``) so ad-hoc queries need
no quoting: ``SELECT reclaimer, threads, throughput FROM runs WHERE ds = 'dgt_bst'``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from smrlab.errors import UsageError
from smrlab.provenance import UNKNOWN, Identity

SCHEMA_VERSION = 7
# Schema 2 adds the bounded pool (pool_nodes, on_empty) and the trial's status; schema 3 Hart et
# al.'s measures (execution and CPU time per operation) and the CPUs a run could use; schema 4
# the smrbench command that produced a run (set, threadtest, layout) and threadtest's and
# layout's block size and objects; schema 5 the nodes freed and, for a run with
# --count-remote-frees, how many of them another thread had allocated; schema 6 the machine and
# the build a row was measured on and with, in its key; schema 7 the advice table (smrlab
# advise). An older store is
# migrated when opened, one step at a time: its runs had no pool, ended "ok", ran the set
# benchmark, counted no remote frees and have an unknown identity (''), and their measures are
# computed from the smrbench JSON each row keeps.

_SCHEMA = """
CREATE TABLE IF NOT EXISTS experiments (
    name        TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT '',
    file        TEXT NOT NULL DEFAULT '',
    definition  TEXT NOT NULL DEFAULT '',   -- the experiment file's TOML text at the last run
    updated     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id             INTEGER PRIMARY KEY,
    experiment     TEXT NOT NULL,
    config_key     TEXT NOT NULL,            -- sorted JSON of the options and the trial index
    machine_id     TEXT NOT NULL DEFAULT '', -- smrlab.provenance ('': not recorded)
    build_id       TEXT NOT NULL DEFAULT '', -- digest of the smrbench binary ('': not recorded)
    benchmark      TEXT NOT NULL DEFAULT 'set', -- set | threadtest | layout (smrbench command)
    ds             TEXT,
    reclaimer      TEXT,
    free           TEXT,
    alloc          TEXT,                     -- the allocator smrbench found serving malloc
    pool_nodes     INTEGER NOT NULL DEFAULT 0, -- bounded pool on top of alloc (0: none)
    on_empty       TEXT,                     -- the pool's policy when empty (NULL: no pool)
    status         TEXT NOT NULL DEFAULT 'ok', -- ok | pool_exhausted
    threads        INTEGER,
    key_range      INTEGER,
    insert_pct     INTEGER,
    erase_pct      INTEGER,
    contains_pct   INTEGER,
    duration       REAL,
    stall          INTEGER,
    seed           INTEGER,
    trial          INTEGER NOT NULL,
    block_size     INTEGER,                  -- threadtest, layout: bytes per block
    objects        INTEGER,                  -- threadtest: 0, one block at a time; N, rounds
    throughput     REAL,                     -- per second: operations (threadtest: pairs)
    exec_time_per_op_ns REAL,                -- Hart: measured time / all threads' operations
    cpu_time_per_op_ns  REAL,                -- Hart: execution time x threads
    cpus           INTEGER,                  -- CPUs the process could run on (NULL: unknown)
    peak_rss_bytes INTEGER,
    garbage_peak   INTEGER,
    free_seconds   REAL,
    epochs         INTEGER,
    freed          INTEGER,                  -- retired nodes freed (the median trial's)
    remote_frees   INTEGER,                  -- of those, allocated by another thread (NULL:
                                             --   not counted, no --count-remote-frees)
    validated      INTEGER NOT NULL,
    elapsed_s      REAL,                     -- wall time of the smrbench process
    command        TEXT NOT NULL,            -- JSON argv
    timestamp      TEXT NOT NULL,            -- UTC, ISO 8601
    result_json    TEXT NOT NULL,            -- smrbench --json output, verbatim
    UNIQUE (experiment, config_key, machine_id, build_id)
);
CREATE INDEX IF NOT EXISTS runs_by_config ON runs (experiment, ds, alloc, reclaimer, free, threads);
CREATE TABLE IF NOT EXISTS failures (
    id         INTEGER PRIMARY KEY,
    experiment TEXT NOT NULL,
    config_key TEXT NOT NULL,
    machine_id TEXT NOT NULL DEFAULT '',
    build_id   TEXT NOT NULL DEFAULT '',
    trial      INTEGER NOT NULL,
    kind       TEXT NOT NULL,                -- exit timeout invalid_json not_validated bad_input
    message    TEXT NOT NULL,                -- one line: what went wrong
    exit_code  INTEGER,
    stderr     TEXT NOT NULL DEFAULT '',
    stdout     TEXT NOT NULL DEFAULT '',
    command    TEXT NOT NULL,
    timestamp  TEXT NOT NULL,
    UNIQUE (experiment, config_key, machine_id, build_id)
);
CREATE TABLE IF NOT EXISTS files (
    id         INTEGER PRIMARY KEY,
    experiment TEXT NOT NULL,
    config_key TEXT NOT NULL,                -- the run these files belong to
    machine_id TEXT NOT NULL DEFAULT '',
    build_id   TEXT NOT NULL DEFAULT '',
    kind       TEXT NOT NULL,                -- timeline | garbage_series
    path       TEXT NOT NULL,                -- relative to the store's directory when inside it
    UNIQUE (experiment, config_key, machine_id, build_id, kind)
);
CREATE TABLE IF NOT EXISTS advice (
    name        TEXT PRIMARY KEY,             -- the workload's name (experiment advise-NAME)
    workload    TEXT NOT NULL,                -- the workload file's TOML text
    advice_json TEXT NOT NULL,                -- smrlab advise --json, verbatim
    updated     TEXT NOT NULL
);
"""

RUN_COLUMNS = (
    "benchmark",
    "ds",
    "reclaimer",
    "free",
    "alloc",
    "pool_nodes",
    "on_empty",
    "status",
    "threads",
    "key_range",
    "insert_pct",
    "erase_pct",
    "contains_pct",
    "duration",
    "stall",
    "seed",
    "trial",
    "block_size",
    "objects",
    "throughput",
    "exec_time_per_op_ns",
    "cpu_time_per_op_ns",
    "cpus",
    "peak_rss_bytes",
    "garbage_peak",
    "free_seconds",
    "epochs",
    "freed",
    "remote_frees",
    "validated",
)


@dataclass(frozen=True)
class Failure:
    """A trial that did not produce a valid result."""

    experiment: str
    config_key: str
    trial: int
    kind: str
    message: str
    exit_code: int | None
    stderr: str
    stdout: str
    command: list[str]
    identity: Identity | None = None  # None: not recorded


def now() -> str:
    """The current UTC time as stored (second precision, ISO 8601)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def columns_from_result(result: dict[str, Any], trial: int) -> dict[str, Any]:
    """The queryable columns of one smrbench --json result (its config is authoritative)."""
    config = result.get("config", {})
    reclaimer = result.get("reclaimer", {})
    allocator = result.get("allocator", {})
    return {
        "benchmark": result.get("benchmark", "set"),  # the set benchmark's JSON names none
        "ds": config.get("ds"),
        "reclaimer": config.get("reclaimer"),
        "free": config.get("free"),
        "alloc": allocator.get("name") or config.get("alloc"),
        "pool_nodes": int(config.get("pool_nodes") or 0),
        "on_empty": config.get("on_empty") if config.get("pool_nodes") else None,
        "status": result.get("status", "ok"),
        "threads": config.get("threads"),
        "key_range": config.get("key_range"),
        "insert_pct": config.get("insert"),
        "erase_pct": config.get("erase"),
        "contains_pct": config.get("contains"),
        "duration": config.get("duration"),
        # 0: no stalled thread, 1: one that holds nothing, 2: one that holds the first node.
        "stall": 2 if config.get("stall_hold") else int(bool(config.get("stall", False))),
        "seed": config.get("seed"),
        "trial": trial,
        "block_size": config.get("block_size"),
        "objects": config.get("objects"),
        "throughput": result.get("throughput_ops_per_s"),
        "exec_time_per_op_ns": result.get("exec_time_per_op_ns"),
        "cpu_time_per_op_ns": result.get("cpu_time_per_op_ns"),
        "cpus": result.get("machine", {}).get("cpus"),
        "peak_rss_bytes": result.get("peak_rss_bytes"),
        "garbage_peak": reclaimer.get("garbage_peak"),
        "free_seconds": reclaimer.get("free_seconds"),
        "epochs": reclaimer.get("epochs"),
        "freed": reclaimer.get("freed"),
        "remote_frees": reclaimer.get("remote_frees"),
        "validated": int(bool(result.get("validated", False))),
    }


def _migrate_from_1(db: sqlite3.Connection) -> None:
    """Schema 1 → 2: the pool columns and the status, with the values every old run had."""
    db.execute("ALTER TABLE runs ADD COLUMN pool_nodes INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE runs ADD COLUMN on_empty TEXT")
    db.execute("ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT 'ok'")


def _migrate_from_2(db: sqlite3.Connection) -> None:
    """Schema 2 → 3: Hart's measures, computed from each run's stored JSON (its median trial's
    interval and operations); the CPUs an old run could use were not recorded (NULL)."""
    db.execute("ALTER TABLE runs ADD COLUMN exec_time_per_op_ns REAL")
    db.execute("ALTER TABLE runs ADD COLUMN cpu_time_per_op_ns REAL")
    db.execute("ALTER TABLE runs ADD COLUMN cpus INTEGER")
    rows = db.execute("SELECT id, result_json FROM runs").fetchall()
    for run_id, text in rows:
        measures = _hart_measures(json.loads(text))
        if measures is not None:
            db.execute(
                "UPDATE runs SET exec_time_per_op_ns = ?, cpu_time_per_op_ns = ? WHERE id = ?",
                (*measures, run_id),
            )


def _hart_measures(result: dict[str, Any]) -> tuple[float, float] | None:
    """Execution and CPU time per operation of a result from before smrbench reported them."""
    trials = result.get("trials") or []
    median = next((t for t in trials if t.get("trial") == result.get("median_trial")), None)
    threads = result.get("config", {}).get("threads")
    if median is None or not median.get("operations") or not threads:
        return None
    exec_ns = median.get("measured_seconds", 0.0) * 1e9 / median["operations"]
    return exec_ns, exec_ns * threads


def _migrate_from_3(db: sqlite3.Connection) -> None:
    """Schema 3 → 4: the smrbench command; every older run was the set benchmark's."""
    db.execute("ALTER TABLE runs ADD COLUMN benchmark TEXT NOT NULL DEFAULT 'set'")
    db.execute("ALTER TABLE runs ADD COLUMN block_size INTEGER")
    db.execute("ALTER TABLE runs ADD COLUMN objects INTEGER")


def _migrate_from_4(db: sqlite3.Connection) -> None:
    """Schema 4 → 5: the nodes freed, from each run's stored JSON; no older run counted
    remote frees (NULL)."""
    db.execute("ALTER TABLE runs ADD COLUMN freed INTEGER")
    db.execute("ALTER TABLE runs ADD COLUMN remote_frees INTEGER")
    rows = db.execute("SELECT id, result_json FROM runs").fetchall()
    for run_id, text in rows:
        freed = json.loads(text).get("reclaimer", {}).get("freed")
        db.execute("UPDATE runs SET freed = ? WHERE id = ?", (freed, run_id))


def _migrate_from_5(db: sqlite3.Connection) -> None:
    """Schema 5 → 6: the identity columns, in the tables' unique keys. SQLite cannot change a
    table's constraint, so each table is made again under the new schema and its rows copied;
    they were stored before smrlab recorded provenance, so their identity is unknown ('')."""
    for table in ("runs", "failures", "files"):
        columns = ", ".join(row[1] for row in db.execute(f"PRAGMA table_info({table})"))
        if not columns:
            continue  # a store from before the table existed: made with the schema below
        definition = _table_definition(table).replace(
            f"CREATE TABLE IF NOT EXISTS {table} (", f"CREATE TABLE {table}_6 ("
        )
        db.execute(definition)
        db.execute(f"INSERT INTO {table}_6 ({columns}) SELECT {columns} FROM {table}")
        db.execute(f"DROP TABLE {table}")
        db.execute(f"ALTER TABLE {table}_6 RENAME TO {table}")


def _table_definition(table: str) -> str:
    """The CREATE TABLE statement of one table of this schema."""
    start = _SCHEMA.index(f"CREATE TABLE IF NOT EXISTS {table} (")
    return _SCHEMA[start : _SCHEMA.index("\n);", start) + 3]


def _migrate_from_6(db: sqlite3.Connection) -> None:
    """Schema 6 → 7: the advice table (an older store holds no advice)."""
    db.execute(_table_definition("advice"))


# Each step brings a store from the version it is keyed by to the next one.
_MIGRATIONS = {
    1: _migrate_from_1,
    2: _migrate_from_2,
    3: _migrate_from_3,
    4: _migrate_from_4,
    5: _migrate_from_5,
    6: _migrate_from_6,
}


# PRAGMA application_id of a smrlab store ("smrl"), set by every smrlab that writes one: an
# SQLite file with another id is another program's. Stores from before it have 0 and are
# recognized by their runs table.
APPLICATION_ID = 0x736D726C
_RUNS_COLUMNS_OF_EVERY_SCHEMA = {"experiment", "config_key", "trial", "result_json"}


def _check_regular(path: Path) -> None:
    if path.exists() and not path.is_file():  # SQLite would block on a FIFO
        raise UsageError(f"{path} is not a smrlab result store: not a regular file")


def _writable(path: Path) -> bool:
    """Whether this process may write the store and the files SQLite makes beside it."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _connect(path: Path, write: bool) -> sqlite3.Connection:
    """A connection. A reader leaves nothing behind: SQLite makes -wal and -shm files beside a
    WAL store for whoever opens it first, owned by that user, and a store's owner cannot write
    past another user's (nor, in a sticky directory such as /tmp, remove them). So with no
    writer about (neither file there: a writer keeps both while it runs), a reader reads the
    file as it is (immutable=1) and makes none; else it shares the writer's: a plain
    connection if this process could write (it writes nothing), one that cannot write
    (mode=ro) otherwise, or, when SQLite cannot open the file that way (its shared-memory file
    unreadable), as it is."""
    if write:
        db = sqlite3.connect(path, timeout=30)
    else:
        uri = path.resolve().as_uri()
        if not _wal_files(path):
            db = sqlite3.connect(f"{uri}?immutable=1", uri=True)
        elif _writable(path):
            db = sqlite3.connect(path, timeout=30)
        else:
            db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30)
            try:
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError as error:
                name = getattr(error, "sqlite_errorname", "")
                if not name.startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY")):
                    db.close()
                    raise
                db.close()
                db = sqlite3.connect(f"{uri}?immutable=1", uri=True)
            except sqlite3.DatabaseError:
                pass  # not a database: _store_version says so
    db.row_factory = sqlite3.Row
    return db


def _wal_files(path: Path) -> bool:
    """Whether a -wal or -shm file is beside the store (SQLite names them after the file a
    symbolic link leads to)."""
    real = Path(os.path.realpath(path))
    return any(real.with_name(real.name + suffix).exists() for suffix in ("-wal", "-shm"))


def _store_version(db: sqlite3.Connection, path: Path) -> int:
    """The store's schema version (0: a new, empty file); UsageError for a file that is not a
    smrlab store of a schema this smrlab knows."""
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        application = db.execute("PRAGMA application_id").fetchone()[0]
        objects = [row[0] for row in db.execute("SELECT name FROM sqlite_master")]
        columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    except sqlite3.DatabaseError as error:
        name = getattr(error, "sqlite_errorname", "")
        if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or not name:
            raise UsageError(f"{path} is not a smrlab result store: {error}") from None
        # The file may be fine: the disk is full, failing, or not ours to read.
        raise UsageError(f"cannot read the result store {path}: {error} ({name})") from None
    newer = version > SCHEMA_VERSION  # its layout is unknown here: only its mark can tell
    foreign = application not in (0, APPLICATION_ID) or (version == 0 and objects)
    if not (foreign or newer):
        foreign = version > 0 and not columns >= _RUNS_COLUMNS_OF_EVERY_SCHEMA
    if foreign:
        listed = ", ".join(sorted(objects)[:5]) or "none"
        raise UsageError(
            f"{path} is an SQLite database but not a smrlab result store (it holds: {listed}); "
            f"give --db a new file"
        )
    if newer:
        raise UsageError(
            f"{path} has store schema {version}; this smrlab knows {SCHEMA_VERSION}: update smrlab"
        )
    return version


def check_store_file(path: Path) -> None:
    """UsageError if ``path`` exists and is not a smrlab store this smrlab can use (what
    ``Store`` refuses), found without writing anything: ``smrlab run`` asks before it takes
    the store's lock, so that a refused file gets no lock file beside it."""
    _check_regular(path)
    if not path.is_file() or path.stat().st_size == 0:
        return
    db = _connect(path, write=False)
    try:
        _store_version(db, path)
    finally:
        db.close()


class EmptyStoreError(UsageError):
    """A store made but holding no results yet (a first run that stopped before its first
    trial ended): nothing to read, but a run may fill it."""


class Store:
    """A result store file. Use as a context manager, or call close()."""

    def __init__(self, path: str | Path, *, create: bool = True, write: bool = True) -> None:
        """Opens (and with ``create``, makes) the store at ``path``.

        ``write=False`` opens it for reading (plot, report, dry run), which a store on a
        read-only file system or someone else's allows; the one write a reader makes is the
        migration of a store from an older smrlab that it may write (once, in one transaction,
        as a run would). A file that is not a smrlab store (damaged, another program's
        database, a newer schema) is refused with UsageError before anything is written to
        it."""
        self.path = Path(path)
        if not create and not self.path.exists():
            raise FileNotFoundError(self.path)
        _check_regular(self.path)
        if write and create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = _connect(self.path, write)
        try:
            version = _store_version(self.db, self.path)
            if write:
                self._prepare_for_writing(version)
            elif version == 0:
                raise EmptyStoreError(f"{self.path} holds no results yet; run an experiment first")
            elif version != SCHEMA_VERSION and _writable(self.path):
                self.db.close()
                self.db = _connect(self.path, True)
                self._prepare_for_writing(version)
            elif version != SCHEMA_VERSION:
                raise UsageError(
                    f"{self.path} has store schema {version}, which this smrlab reads after "
                    f"migrating it to {SCHEMA_VERSION}; it cannot write there: open it once "
                    f"with write access (smrlab run)"
                )
        except BaseException:
            self.db.close()
            raise

    def _prepare_for_writing(self, version: int) -> None:
        """WAL, the migrations an older store needs, the schema a new one lacks, the mark."""
        try:
            # WAL: `smrlab plot` can read while a run writes; commits stay durable per result.
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            if 0 < version < SCHEMA_VERSION:
                self._migrate()
            self.db.executescript(_SCHEMA)  # creates what a new store lacks; idempotent
            if version == 0:
                self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self.db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            self.db.commit()
        except sqlite3.OperationalError as error:
            raise UsageError(f"cannot write to the result store {self.path}: {error}") from None

    def _migrate(self) -> None:
        """Brings an older store to this schema in one transaction: entirely or not at all,
        and once, if two smrlab processes open the same old store."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            while 0 < version < SCHEMA_VERSION:
                _MIGRATIONS[version](self.db)
                version += 1
            self.db.execute(f"PRAGMA user_version={version}")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the database (every result is already committed)."""
        self.db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self.db:
            yield self.db

    # --- writing -------------------------------------------------------------------------

    def record_experiment(self, name: str, description: str, file: str, definition: str) -> None:
        """Remembers an experiment's description and definition (shown in the report)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO experiments (name, description, file, definition, updated) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                "description = excluded.description, file = excluded.file, "
                "definition = excluded.definition, updated = excluded.updated",
                (name, description, file, definition, now()),
            )

    def record_advice(self, name: str, workload: str, advice_json: str) -> None:
        """Keeps the newest advice for a workload (shown in the report)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO advice (name, workload, advice_json, updated) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET workload = excluded.workload, "
                "advice_json = excluded.advice_json, updated = excluded.updated",
                (name, workload, advice_json, now()),
            )

    def add_run(
        self,
        experiment: str,
        config_key: str,
        trial: int,
        result: dict[str, Any],
        command: list[str],
        elapsed_s: float | None = None,
        files: dict[str, Path] | None = None,
        identity: Identity | None = None,
    ) -> bool:
        """Stores a valid result (and its files) in one transaction.

        Returns False, storing nothing, if this (experiment, config_key) is already stored
        for this identity (None: not recorded): a result is never duplicated or overwritten.
        A stored result clears the job's earlier failures, on any machine or build.
        """
        machine_id, build_id = _ids(identity)
        row = columns_from_result(result, trial)
        row.update(
            experiment=experiment,
            config_key=config_key,
            machine_id=machine_id,
            build_id=build_id,
            elapsed_s=elapsed_s,
            command=json.dumps(command),
            timestamp=now(),
            result_json=json.dumps(result, sort_keys=True),
        )
        names = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        with self._transaction() as db:
            cursor = db.execute(
                f"INSERT OR IGNORE INTO runs ({names}) VALUES ({marks})", tuple(row.values())
            )
            if cursor.rowcount == 0:
                return False
            db.execute(
                "DELETE FROM failures WHERE experiment = ? AND config_key = ?",
                (experiment, config_key),
            )
            for kind, path in (files or {}).items():
                db.execute(
                    "INSERT OR REPLACE INTO files "
                    "(experiment, config_key, machine_id, build_id, kind, path) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (experiment, config_key, machine_id, build_id, kind, self._relative(path)),
                )
        return True

    def add_failure(self, failure: Failure) -> None:
        """Records (or replaces) the failure of a job; its result stays absent so a re-run
        tries it again."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO failures (experiment, config_key, machine_id, build_id, "
                "trial, kind, message, exit_code, stderr, stdout, command, timestamp) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    failure.experiment,
                    failure.config_key,
                    *_ids(failure.identity),
                    failure.trial,
                    failure.kind,
                    failure.message,
                    failure.exit_code,
                    failure.stderr[-20000:],
                    failure.stdout[-20000:],
                    json.dumps(failure.command),
                    now(),
                ),
            )

    # --- reading -------------------------------------------------------------------------

    def stored_keys(self, experiment: str, identity: Identity | None = None) -> set[str]:
        """Config keys of the results stored for an experiment (what a re-run skips): those
        measured with ``identity``'s machine and binary, or with any (None)."""
        query = "SELECT config_key FROM runs WHERE experiment = ?"
        args: tuple[str, ...] = (experiment,)
        if identity is not None:
            query += " AND machine_id = ? AND build_id = ?"
            args += _ids(identity)
        return {row[0] for row in self.db.execute(query, args)}

    def has_run(self, experiment: str, config_key: str) -> bool:
        """Whether this job's result is stored (by any machine or build)."""
        row = self.db.execute(
            "SELECT 1 FROM runs WHERE experiment = ? AND config_key = ?", (experiment, config_key)
        ).fetchone()
        return row is not None

    def identities(self, experiment: str | None = None) -> list[dict[str, Any]]:
        """The machines and builds of the results readers see (``runs``), each with its
        ``machine`` and ``build`` objects (from its newest row) and ``runs``, its row count."""
        query = (
            f"SELECT machine_id, build_id, COUNT(*) AS runs, MAX(id) AS newest FROM runs "
            f"WHERE id IN ({_NEWEST_PER_KEY})"
        )
        args: tuple[str, ...] = ()
        if experiment is not None:
            query += " AND experiment = ?"
            args = (experiment,)
        items = []
        for row in self.db.execute(query + " GROUP BY machine_id, build_id ORDER BY newest", args):
            (text,) = self.db.execute(
                "SELECT result_json FROM runs WHERE id = ?", (row["newest"],)
            ).fetchone()
            result = json.loads(text)
            items.append(
                {
                    "machine_id": row["machine_id"],
                    "build_id": row["build_id"],
                    "runs": row["runs"],
                    "machine": result.get("machine") or {},
                    "build": result.get("build") or {},
                }
            )
        return items

    def experiments(self) -> list[str]:
        """Names of experiments with stored results, in order of their first result."""
        rows = self.db.execute("SELECT experiment FROM runs GROUP BY experiment ORDER BY MIN(id)")
        return [row[0] for row in rows]

    def advice(self) -> list[dict[str, Any]]:
        """Every stored advice, parsed, oldest first."""
        try:
            rows = self.db.execute("SELECT advice_json FROM advice ORDER BY updated, name")
        except sqlite3.OperationalError:  # a store from before schema 7, opened read-only
            return []
        return [json.loads(row[0]) for row in rows]

    def experiment_info(self, name: str) -> dict[str, str]:
        """Description and file of an experiment ({} if it was never recorded)."""
        row = self.db.execute("SELECT * FROM experiments WHERE name = ?", (name,)).fetchone()
        return dict(row) if row else {}

    def runs(
        self, experiment: str | None = None, every_build: bool = False
    ) -> list[dict[str, Any]]:
        """Stored runs as dicts (columns plus ``result``, the parsed JSON, and ``options``,
        the parsed config key), oldest first: per configuration and machine, its newest result
        (a configuration measured again with a rebuilt smrbench shows the new measure), or with
        ``every_build`` every stored row."""
        query = "SELECT * FROM runs WHERE " + (
            "1=1" if every_build else f"id IN ({_NEWEST_PER_KEY})"
        )
        args: tuple[str, ...] = ()
        if experiment is not None:
            query += " AND experiment = ?"
            args = (experiment,)
        rows = []
        for row in self.db.execute(query + " ORDER BY id", args):
            item = dict(row)
            item["result"] = json.loads(item["result_json"])
            item["options"] = json.loads(item["config_key"])
            rows.append(item)
        return rows

    def failures(self, experiment: str | None = None) -> list[dict[str, Any]]:
        """Recorded failures (the latest per job), oldest first."""
        query = "SELECT * FROM failures"
        args: tuple[str, ...] = ()
        if experiment is not None:
            query += " WHERE experiment = ?"
            args = (experiment,)
        return [dict(row) for row in self.db.execute(query + " ORDER BY id", args)]

    def files(self, experiment: str | None = None, kind: str | None = None) -> list[dict]:
        """Referenced files with ``path`` resolved (relative paths are against the store's
        directory), joined with their run's columns; missing files are included with
        ``exists`` False so callers can say which ones are gone."""
        query = (
            "SELECT f.kind AS kind, f.path AS file_path, r.* FROM files f JOIN runs r "
            "ON f.experiment = r.experiment AND f.config_key = r.config_key "
            "AND f.machine_id = r.machine_id AND f.build_id = r.build_id "
            f"WHERE r.id IN ({_NEWEST_PER_KEY})"
        )
        args: list[str] = []
        if experiment is not None:
            query += " AND f.experiment = ?"
            args.append(experiment)
        if kind is not None:
            query += " AND f.kind = ?"
            args.append(kind)
        items = []
        for row in self.db.execute(query + " ORDER BY r.id", args):
            item = dict(row)
            path = Path(item.pop("file_path"))
            item["path"] = path if path.is_absolute() else self.path.parent / path
            item["exists"] = item["path"].is_file()
            item["result"] = json.loads(item["result_json"])
            item["options"] = json.loads(item["config_key"])
            items.append(item)
        return items

    def _relative(self, path: Path) -> str:
        path = Path(path).resolve()
        try:
            return str(path.relative_to(self.path.parent.resolve()))
        except ValueError:
            return str(path)


# The rows readers see: the newest of each configuration's results on each machine, where a row
# of an unrecorded machine (stored before provenance) counts only while no recorded machine has
# measured its configuration.
_NEWEST_PER_KEY = (
    "SELECT MAX(id) FROM runs r WHERE machine_id != '' OR NOT EXISTS (SELECT 1 FROM runs k "
    "WHERE k.experiment = r.experiment AND k.config_key = r.config_key AND k.machine_id != '') "
    "GROUP BY experiment, config_key, machine_id"
)


def _ids(identity: Identity | None) -> tuple[str, str]:
    """The identity columns of a row (UNKNOWN for a run that recorded none)."""
    if identity is None:
        return UNKNOWN, UNKNOWN
    return identity.machine_id, identity.build_id
