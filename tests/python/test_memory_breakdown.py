"""scripts/measure/memory_breakdown.py against a fake smrbench: the split of the RSS at the
highest sample, the node size taken from --list, and one line on bad input."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MB = 2**20


@pytest.fixture(scope="module")
def memory_breakdown(load_measure_script):
    return load_measure_script("memory_breakdown")


LISTING = {
    "combinations": [
        {"ds": "dgt_bst", "reclaimer": name, "node_bytes": 64} for name in ("debra", "broken")
    ]
}


def trial(rss: int, samples: list[dict]) -> dict:
    stats = {"allocated": 3_000_000, "retired": 1_000_000, "discarded": 10, "garbage_peak": 5_000}
    return {
        "validated": True,
        "median_trial": 0,
        "allocator": {"name": "jemalloc"},
        "trials": [{"peak_rss_bytes": rss, "reclaimer": stats, "samples": samples}],
    }


LIVE = (3_000_000 - 1_000_000 - 10) * 64
RUN = trial(
    200 * MB,
    [
        {"rss_bytes": 150 * MB, "allocator_bytes": LIVE + 64_000, "garbage": 1_000},
        {"rss_bytes": 199 * MB, "allocator_bytes": LIVE + 320_000 + 5 * MB, "garbage": 5_000},
    ],
)
FLOOR = trial(8 * MB, [{"rss_bytes": 8 * MB, "allocator_bytes": MB, "garbage": 0}])

FAKE = f"""#!{sys.executable}
import sys
args = sys.argv[1:]
if "--list" in args:
    print({json.dumps(LISTING)!r})
elif "--reclaimer" in args and args[args.index("--reclaimer") + 1] == "broken":
    sys.exit("smrbench: error: the fake fails")
elif "64" in args:
    print({json.dumps(FLOOR)!r})
else:
    print({json.dumps(RUN)!r})
"""


@pytest.fixture
def smrbench(tmp_path: Path) -> Path:
    path = tmp_path / "smrbench"
    path.write_text(FAKE)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_splits_the_rss_at_its_highest_sample(memory_breakdown):
    split = memory_breakdown.breakdown(RUN, FLOOR, 64)
    assert split["live_nodes"] == LIVE
    assert split["garbage"] == 5_000 * 64  # the top sample's, not the first's
    assert split["garbage_peak"] == 5_000 * 64
    assert split["other_heap"] == 5 * MB
    assert split["allocator"] == 199 * MB - 8 * MB - (LIVE + 320_000 + 5 * MB)
    assert split["peak_rss"] == 200 * MB and split["floor"] == 8 * MB


def test_prints_a_row_per_reclaimer_with_the_listed_node_size(memory_breakdown, smrbench, capsys):
    assert memory_breakdown.main(["--smrbench", str(smrbench), "--reclaimers", "debra"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| debra")]
    assert len(rows) == 1
    cells = [cell.strip() for cell in rows[0].split("|")[1:-1]]
    assert cells[1] == "64" and cells[2] == "200.0"
    assert cells[-1] == f"{200 * MB / (LIVE + 5_000 * 64):.2f}"


@pytest.mark.parametrize(
    ("reclaimers", "message"),
    [("hp", "knows no combination dgt_bst x hp"), ("broken", "the fake fails")],
)
def test_bad_input_is_one_line(memory_breakdown, smrbench, capsys, reclaimers, message):
    assert memory_breakdown.main(["--smrbench", str(smrbench), "--reclaimers", reclaimers]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert [line for line in lines if message in line] == lines[-1:], lines
