"""`smrlab merge`: results from several stores (machines, clones, colleagues) in one.

Rows keep their identity: a run is the same run when its experiment, configuration key,
machine and build are, so merging a store twice adds nothing, and two machines' results of one
configuration both stay, which figures then draw apart. A row whose key is already in the
destination with another result (possible only for rows stored before provenance, whose
machine and build are unrecorded) is a conflict: the destination's row stays and the count is
reported. Recorded timelines and garbage series are copied under the destination's
``files/merged/`` so the merged store stands on its own.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from smrlab.store import Store


@dataclass
class Merged:
    """What one merge did."""

    added: int = 0
    already: int = 0  # identical rows the destination held
    conflicts: int = 0  # same key, another result: the destination's kept
    failures: int = 0
    files: int = 0
    missing_files: list[str] = field(default_factory=list)


def merge(destination: Store, source: Store) -> Merged:
    """Adds ``source``'s rows to ``destination`` in one transaction."""
    done = Merged()
    columns = _shared_columns(destination, source, "runs")
    names = ", ".join(columns)
    marks = ", ".join("?" for _ in columns)
    folder = "src-" + hashlib.sha256(str(source.path.resolve()).encode()).hexdigest()[:10]
    with destination.db:
        for name, info in _experiments(source):
            destination.db.execute(
                "INSERT OR IGNORE INTO experiments (name, description, file, definition, updated) "
                "VALUES (?, ?, ?, ?, ?)",
                (name, info["description"], info["file"], info["definition"], info["updated"]),
            )
        for row in source.db.execute(f"SELECT {names} FROM runs ORDER BY id"):
            values = dict(zip(columns, tuple(row), strict=True))
            stored = destination.db.execute(
                "SELECT result_json FROM runs WHERE experiment = ? AND config_key = ? "
                "AND machine_id = ? AND build_id = ?",
                _identity(values),
            ).fetchone()
            if stored is not None:
                if stored[0] == values["result_json"]:
                    done.already += 1
                else:
                    done.conflicts += 1
                continue
            destination.db.execute(
                f"INSERT INTO runs ({names}) VALUES ({marks})", tuple(values.values())
            )
            done.added += 1
            _copy_files(destination, source, values, folder, done)
        failure_columns = _shared_columns(destination, source, "failures")
        listed = ", ".join(failure_columns)
        for row in source.db.execute(f"SELECT {listed} FROM failures"):
            cursor = destination.db.execute(
                f"INSERT OR IGNORE INTO failures ({listed}) "
                f"VALUES ({', '.join('?' for _ in failure_columns)})",
                tuple(row),
            )
            done.failures += cursor.rowcount
    return done


def _identity(values: dict) -> tuple[str, str, str, str]:
    return values["experiment"], values["config_key"], values["machine_id"], values["build_id"]


def _shared_columns(destination: Store, source: Store, table: str) -> list[str]:
    """The table's columns both stores have, but the row id (the destination numbers them)."""
    mine = [row[1] for row in destination.db.execute(f"PRAGMA table_info({table})")]
    theirs = {row[1] for row in source.db.execute(f"PRAGMA table_info({table})")}
    return [column for column in mine if column in theirs and column != "id"]


def _experiments(source: Store) -> list[tuple[str, dict]]:
    return [(row["name"], dict(row)) for row in source.db.execute("SELECT * FROM experiments")]


def _copy_files(destination: Store, source: Store, run: dict, folder: str, done: Merged) -> None:
    """Copies the files of one merged run into the destination's directory and records them."""
    rows = source.db.execute(
        "SELECT kind, path FROM files WHERE experiment = ? AND config_key = ? AND machine_id = ? "
        "AND build_id = ?",
        _identity(run),
    ).fetchall()
    for kind, stored in rows:
        original = Path(stored)
        inside = Path(*original.parts[1:]) if original.is_absolute() else original
        if not original.is_absolute():
            original = source.path.parent / original
        if not original.is_file():
            done.missing_files.append(str(original))
            continue
        relative = Path("files") / "merged" / folder / inside
        target = destination.path.parent / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            shutil.copyfile(original, target)
        destination.db.execute(
            "INSERT OR IGNORE INTO files (experiment, config_key, machine_id, build_id, kind, "
            "path) VALUES (?, ?, ?, ?, ?, ?)",
            (*_identity(run), kind, str(relative)),
        )
        done.files += 1
