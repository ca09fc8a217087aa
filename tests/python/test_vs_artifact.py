"""scripts/measure/vs_artifact.py against a fake artifact checkout and a fake smrbench: the
build step, the pairing (order alternating by round), the ratios, and one line on bad input."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def vs_artifact(load_measure_script):
    return load_measure_script("vs_artifact")


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# The artifact's binaries: log the call, then print what the real one prints at its end.
FAKE_BINARY = """#!/bin/sh
echo "artifact $*" >> "$FAKE_LOG"
[ "$FAKE_ARTIFACT" = invalid ] && { echo "Validation FAILED."; exit 0; }
echo "Validation OK."
echo "total_throughput=1000000"
"""

# Builds a binary as the artifact's rules do: the debra rule also makes debra_df.
FAKE_MAKEFILE = """ubench_%.out:
\tmkdir -p bin
\tcp fake.sh bin/$@ && chmod +x bin/$@
\tcp fake.sh bin/$(subst reclaim_debra.,reclaim_debra_df.,$@) && chmod +x bin/*
"""

FAKE_SMRBENCH = """#!/bin/sh
echo "smrbench $*" >> "$FAKE_LOG"
if [ "$FAKE_SMRBENCH" = invalid ]; then validated=false; else validated=true; fi
echo "{\\"validated\\": $validated, \\"throughput_ops_per_s\\": 1200000.0}"
"""


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    microbench = tmp_path / "artifact" / "microbench"
    microbench.mkdir(parents=True)
    (microbench / "Makefile").write_text(FAKE_MAKEFILE)
    (microbench / "main.cpp").write_text("// the fake artifact\n")
    executable(microbench / "fake.sh", FAKE_BINARY)
    executable(tmp_path / "smrbench", FAKE_SMRBENCH)
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "calls.log"))
    return tmp_path


def arguments(root: Path, *extra: str) -> list[str]:
    return [
        "--artifact", str(root / "artifact"),
        "--smrbench", str(root / "smrbench"),
        "--ds", "dgt_bst",
        "--reclaimers", "debra", "debra_df",
        "--threads", "2",
        "--duration", "0.01",
        "--alloc", "glibc",
        *extra,
    ]  # fmt: skip


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_builds_the_missing_binaries_runs_pairs_and_reports_ratios(vs_artifact, checkout, capsys):
    out_json = checkout / "samples.json"
    extra = ["--smrbench-args", "--bag-size 16000", "--json", str(out_json)]
    status = vs_artifact.main(arguments(checkout, "--rounds", "2", *extra))
    assert status == 0
    bin_dir = checkout / "artifact" / "microbench" / "bin"
    assert (
        bin_dir / "ubench_guerraoui_ext_bst_ticket.alloc_new.reclaim_debra_df.pool_none.out"
    ).is_file()

    calls = (checkout / "calls.log").read_text().splitlines()
    programs = [line.split()[0] for line in calls]
    # Round 1 runs the artifact first in each pair, round 2 smrbench first.
    assert programs == ["artifact", "smrbench"] * 2 + ["smrbench", "artifact"] * 2
    amortized = [line for line in calls if line.startswith("smrbench") and "amortized" in line]
    assert len(amortized) == 2 and all("--reclaimer debra" in line for line in amortized)
    assert all(line.endswith("--bag-size 16000") for line in calls if line.startswith("smrbench"))
    assert all(
        "-nwork 2 -nprefill 2 -i 50 -d 50" in line for line in calls if line.startswith("artifact")
    )

    table = capsys.readouterr().out
    assert (
        "| dgt_bst | 2 | debra_df | debra amortized | 1.00 (1.00–1.00) | 1.20 (1.20–1.20) | 1.20"
        in table
    )
    saved = json.loads(out_json.read_text())
    assert [c["smrbench_ops_per_s"] for c in saved["cells"]] == [[1.2e6, 1.2e6]] * 2
    assert all(len(c["artifact_peak_rss_bytes"]) == 2 for c in saved["cells"])


def prebuilt(checkout: Path) -> None:
    bin_dir = checkout / "artifact" / "microbench" / "bin"
    bin_dir.mkdir()
    for reclaimer in ("debra", "debra_df"):
        name = f"ubench_guerraoui_ext_bst_ticket.alloc_new.reclaim_{reclaimer}.pool_none.out"
        shutil.copy(checkout / "artifact" / "microbench" / "fake.sh", bin_dir / name)


@pytest.mark.parametrize(
    ("program", "message"),
    [
        ("FAKE_ARTIFACT", "the artifact did not validate"),
        ("FAKE_SMRBENCH", "smrbench did not validate"),
    ],
)
def test_a_run_that_does_not_validate_stops_with_one_line(
    vs_artifact, checkout, capsys, monkeypatch, program, message
):
    prebuilt(checkout)
    monkeypatch.setenv(program, "invalid")
    assert vs_artifact.main(arguments(checkout, "--rounds", "1")) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    errors = [line for line in captured.err.splitlines() if "pair" not in line]
    assert len(errors) == 1 and message in errors[0]


def test_bad_input_is_one_line(vs_artifact, checkout, capsys):
    assert vs_artifact.main(arguments(checkout / "nowhere")) == 1
    assert capsys.readouterr().err.count("\n") == 1
    assert vs_artifact.main(arguments(checkout, "--rounds", "0")) == 1
    assert "must be positive" in capsys.readouterr().err
