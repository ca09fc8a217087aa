"""smrlab reproduce: the page's experiments found in its headings, run in order, timed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smrlab import reproduce
from smrlab.cli import main
from smrlab.errors import UsageError

REPO = Path(__file__).resolve().parents[2]

SMALL = """
[experiment]
name = "{name}"
description = "a small grid for the fake smrbench"
[grid]
reclaimer = ["none", "debra"]
[fixed]
ds = "dgt_bst"
alloc = "glibc"
threads = 2
duration = 0.05
trials = 2
"""

PAGE = """# Reproductions

## The machine

## Paper A, Figure 1 — `first.toml`

```
## not a heading — `missing.toml`
```

### Paper B, Figure 2 (`experiments/second.toml`, `first.toml`)

## A model — `scripts/measure/model.py`

## Paper C, every figure — `third_*.toml`
"""


def layout(tmp_path: Path, page: str = PAGE) -> tuple[Path, Path]:
    experiments = tmp_path / "experiments"
    experiments.mkdir()
    for name in ("first", "second"):
        (experiments / f"{name}.toml").write_text(SMALL.format(name=name))
    path = tmp_path / "page.md"
    path.write_text(page)
    return path, experiments


def test_the_page_s_headings_name_its_experiments_in_order(tmp_path):
    page, experiments = layout(tmp_path)
    sections = reproduce.read_page(page, experiments)
    assert [s.title for s in sections] == [
        "Paper A, Figure 1 — first.toml",
        "Paper B, Figure 2 (experiments/second.toml, first.toml)",
        "A model — scripts/measure/model.py",
    ]
    assert sections[2].experiments == () and sections[2].scripts == ("scripts/measure/model.py",)
    chosen = reproduce.experiments_in_order(sections)
    assert [(p.name, title.split(",")[0]) for p, title in chosen] == [
        ("first.toml", "Paper A"),
        ("second.toml", "Paper B"),
    ]
    assert [p.name for p, _ in reproduce.choose(chosen, ["second"])] == ["second.toml"]
    with pytest.raises(UsageError, match="--only nope: not an experiment the page shows"):
        reproduce.choose(chosen, ["first,nope"])


def test_a_heading_naming_a_missing_file_is_one_clear_error(tmp_path):
    page, experiments = layout(tmp_path, PAGE + "\n## Paper D — `gone.toml`\n")
    with pytest.raises(UsageError, match=r"names gone\.toml, which is not in .*experiments"):
        reproduce.read_page(page, experiments)
    assert main(["reproduce", "--list", "--page", str(tmp_path / "none.md")]) == 2


def test_every_experiment_file_has_a_section_on_the_real_page():
    sections = reproduce.read_page(REPO / "docs" / "reproductions.md", REPO / "experiments")
    named = {p.name for s in sections for p in s.experiments}
    files = {p.name for p in (REPO / "experiments").glob("*.toml")}
    assert files - named == set(), "experiment files no section of reproductions.md names"


def test_list_runs_nothing(tmp_path, capsys, fake_smrbench):
    page, experiments = layout(tmp_path)
    db = tmp_path / "r.db"
    assert (
        main(["reproduce", "--list", "--page", str(page), "--experiments", str(experiments)]) == 0
    )
    out, err = capsys.readouterr()
    assert "first.toml" in out and "scripts/measure/model.py (a script: not run)" in out
    assert "2 experiment files to run" in err
    assert not db.exists() and not Path(str(fake_smrbench) + ".log").exists()


def test_one_command_runs_every_experiment_then_resumes(tmp_path, capsys, fake_smrbench):
    page, experiments = layout(tmp_path)
    db, out = tmp_path / "r.db", tmp_path / "out"
    argv = [
        "reproduce",
        "--page",
        str(page),
        "--experiments",
        str(experiments),
        "--db",
        str(db),
        "--out",
        str(out),
        "--smrbench",
        str(fake_smrbench),
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "[1/2] first.toml" in err and "[2/2] second.toml" in err
    assert "2 experiments in" in err
    record = json.loads((out / "summary.json").read_text())
    assert [e["experiment"] for e in record["experiments"]] == ["first", "second"]
    assert [e["ran"] for e in record["experiments"]] == [4, 4]
    assert all(e["load_average"] >= 0 and e["seconds"] > 0 for e in record["experiments"])
    summary = (out / "summary.md").read_text()
    assert "| first | Paper A, Figure 1 — first.toml |" in summary
    assert "A model — scripts/measure/model.py: `scripts/measure/model.py`" in summary
    assert (out / "report" / "index.html").is_file()
    assert any((out / "figures").iterdir())

    assert main(argv) == 0  # every trial stored by this binary: nothing runs again
    record = json.loads((out / "summary.json").read_text())
    assert [(e["ran"], e["stored_before"]) for e in record["experiments"]] == [(0, 4), (0, 4)]


def test_an_experiment_without_the_size_is_left_out_and_said_so(tmp_path, capsys, fake_smrbench):
    page, experiments = layout(tmp_path)
    with (experiments / "second.toml").open("a") as toml:
        toml.write("[sizes.paper]\nduration = 0.1\n")
    out = tmp_path / "out"
    argv = ["reproduce", "--page", str(page), "--experiments", str(experiments)]
    argv += ["--db", str(tmp_path / "r.db"), "--out", str(out), "--smrbench", str(fake_smrbench)]
    assert main([*argv, "--size", "paper"]) == 1  # not every section ran
    err = capsys.readouterr().err
    assert "first.toml left out" in err and "1 experiments in" in err and "1 left out" in err
    record = json.loads((out / "summary.json").read_text())
    first, second = record["experiments"]
    assert first["skipped_reason"] and first["ran"] == 0
    assert second["ran"] == 4 and not second["skipped_reason"]
    assert (
        "| first | Paper A, Figure 1 — first.toml | left out:" in (out / "summary.md").read_text()
    )


def test_when_nothing_can_run_the_summary_says_so(tmp_path, capsys, fake_smrbench):
    page, experiments = layout(tmp_path)
    out, db = tmp_path / "out", tmp_path / "r.db"
    argv = ["reproduce", "--page", str(page), "--experiments", str(experiments), "--size", "big"]
    argv += ["--db", str(db), "--out", str(out), "--smrbench", str(fake_smrbench)]
    assert main(argv) == 1
    assert "no figures: nothing ran" in capsys.readouterr().err and not db.exists()
    record = json.loads((out / "summary.json").read_text())
    assert all("no size 'big'" in e["skipped_reason"] for e in record["experiments"])
