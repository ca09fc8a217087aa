"""Timeline and garbage-series readers (on files written here to docs/timeline-format.md) and
the `smrlab timeline` graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smrlab.cli import main
from smrlab.errors import UsageError
from smrlab.timeline import KINDS, FormatError, read_garbage_series, read_timeline
from smrlab.timeline_plot import parse_thread_list, plot_timeline
from specfiles import garbage_totals, timeline_events, write_garbage_series, write_timeline


def test_reads_every_event_of_a_spec_file(tmp_path: Path) -> None:
    rows = timeline_events(threads=4)
    path = write_timeline(tmp_path / "run.timeline", rows, threads=4, truncated=[2])
    timeline = read_timeline(path)
    measured = [r for r in rows if r[3] >= 0]
    assert len(timeline) == len(measured)
    assert timeline.threads == 4 and timeline.rows == [0, 1, 2, 3]
    assert timeline.truncated_threads == [2]
    assert timeline.config["reclaimer"] == "debra"
    assert int(timeline.kind_mask("epoch_change").sum()) == sum(
        1 for r in measured if r[1] == "epoch_change"
    )
    first = next(r for r in measured if r[0] == 0)
    assert (
        KINDS[timeline.kind[0]],
        int(timeline.start[0]),
        int(timeline.end[0]),
        int(timeline.value[0]),
    ) == first[1:]
    with_prefill = read_timeline(path, include_prefill=True)
    assert len(with_prefill) == len(rows) and int(with_prefill.start.min()) < 0


def test_unknown_kinds_are_ignored_and_counted(tmp_path: Path) -> None:
    rows = [
        (0, "batch_free", 10, 20, 5),
        (0, "teleport", 30, 30, 1),
        (1, "epoch_change", 40, 40, 2),
        (1, "teleport", 50, 50, 0),
    ]
    timeline = read_timeline(write_timeline(tmp_path / "t.timeline", rows, threads=2))
    assert len(timeline) == 2 and timeline.ignored_kinds == {"teleport": 2}


def test_column_order_from_the_header_row(tmp_path: Path) -> None:
    header = {"format": "smrlab-timeline", "version": 1, "threads": 1, "measured_end_ns": 100}
    path = tmp_path / "t.timeline"
    path.write_text(
        json.dumps(header) + "\nkind,thread,value,start_ns,end_ns\n"
        "batch_free,0,7,10,20\nepoch_change,0,3,15,15\n"
    )
    timeline = read_timeline(path)
    assert timeline.value.tolist() == [7, 3] and timeline.start.tolist() == [10, 15]


def test_window_and_threads(tmp_path: Path) -> None:
    lo, hi = 50_000_000, 100_000_000
    # Events at the window's edges: two that overlap it by 10 ns, two that miss it by 1 ns.
    edges = [
        (1, "batch_free", lo - 20, lo + 10, 1),
        (3, "batch_free", hi - 10, hi + 20, 1),
        (1, "batch_free", lo - 20, lo - 1, 1),
        (3, "batch_free", hi + 1, hi + 20, 1),
    ]
    rows = sorted(timeline_events(threads=6) + edges, key=lambda row: (row[0], row[2]))
    timeline = read_timeline(write_timeline(tmp_path / "t.timeline", rows, threads=6))
    window = timeline.window(lo, hi, [1, 3])
    got = sorted(
        zip(window.thread.tolist(), window.start.tolist(), window.end.tolist(), strict=True)
    )
    expected = sorted(
        (thread, start, end)
        for thread, _, start, end, _ in rows
        if thread in (1, 3) and start >= 0 and end >= lo and start <= hi
    )
    assert len(expected) > 10 and got == expected
    assert (1, lo - 20, lo + 10) in got and (3, hi - 10, hi + 20) in got
    assert (1, lo - 20, lo - 1) not in got and (3, hi + 1, hi + 20) not in got


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"version": 2}, "version 2 is not supported"),
        ({"fmt": "smrlab-garbage-series"}, "expected 'smrlab-timeline'"),
    ],
)
def test_refuses_unknown_formats_and_versions(tmp_path: Path, kwargs: dict, message: str) -> None:
    path = write_timeline(tmp_path / "t.timeline", **kwargs)
    with pytest.raises(FormatError, match=message):
        read_timeline(path)


def test_refuses_non_timeline_and_malformed_rows(tmp_path: Path) -> None:
    path = tmp_path / "x.timeline"
    path.write_text("thread,kind\n0,batch_free\n")
    with pytest.raises(FormatError, match="not a JSON header"):
        read_timeline(path)
    write_timeline(path, [(0, "batch_free", 1, 2, 3)], threads=1)
    path.write_text(path.read_text() + "0,batch_free,zz,2,3\n")
    with pytest.raises(FormatError, match=r"x.timeline:4: malformed row"):
        read_timeline(path)


@pytest.mark.parametrize("version", [1, 2])
def test_garbage_series(tmp_path: Path, version: int) -> None:
    path = write_garbage_series(tmp_path / "g.garbage", points=50, version=version)
    series = read_garbage_series(path)
    times, totals = garbage_totals(50, "batch", 5)
    assert len(series) == 50 and series.epoch.tolist() == list(range(1, 51))
    assert series.garbage.tolist() == totals.tolist() and series.time_ns.tolist() == times.tolist()
    assert series.per_thread == (version == 2)
    if version == 2:
        assert series.threads is not None and set(series.threads.tolist()) == {4}
    with pytest.raises(FormatError, match="expected 'smrlab-garbage-series'"):
        read_garbage_series(write_timeline(tmp_path / "t.timeline"))


def test_garbage_series_sums_each_epoch_over_the_threads_that_began_it(tmp_path: Path) -> None:
    # Thread 1 skips epoch 2 (it rotated once over two epochs) and only thread 0 began epoch 3
    # before the trial ended; rows come in time order, so epochs interleave across threads.
    path = tmp_path / "g.garbage"
    rows = ["100,1,0,10", "150,1,1,7", "300,2,0,4", "320,3,0,30", "400,3,1,1"]
    header = {"format": "smrlab-garbage-series", "version": 2, "points": len(rows)}
    text = "\n".join([json.dumps(header), "time_ns,epoch,thread,garbage", *rows]) + "\n"
    path.write_text(text)
    series = read_garbage_series(path)
    assert series.epoch.tolist() == [1, 2, 3]
    assert series.garbage.tolist() == [17, 4, 31]
    assert series.time_ns.tolist() == [100, 300, 320]
    assert series.threads is not None and series.threads.tolist() == [2, 1, 2]
    # An epoch first begun during the prefill (negative time) is the prefill's, not the run's.
    path.write_text(text.replace("100,1,0,10", "-5,1,0,10"))
    assert read_garbage_series(path).epoch.tolist() == [2, 3]
    assert read_garbage_series(path, include_prefill=True).garbage.tolist() == [17, 4, 31]
    path.write_text(text.replace('"version": 2', '"version": 3'))
    with pytest.raises(FormatError, match=r"version 3 is not supported .*reads version 1 and 2"):
        read_garbage_series(path)


def test_big_file_is_read_fast(tmp_path: Path) -> None:
    threads, per_thread = 16, 20_000
    rows = [
        (t, "free_call", i * 1000, i * 1000 + 50, 1)
        for t in range(threads)
        for i in range(per_thread)
    ]
    timeline = read_timeline(write_timeline(tmp_path / "big.timeline", rows, threads=threads))
    assert len(timeline) == threads * per_thread


def test_thread_lists() -> None:
    assert parse_thread_list("0-3,7,5-6") == [0, 1, 2, 3, 5, 6, 7]
    for bad in ("a", "3-1", "1,,2"):
        with pytest.raises(UsageError):
            parse_thread_list(bad)


def test_timeline_graph_content(tmp_path: Path) -> None:
    timeline = read_timeline(write_timeline(tmp_path / "t.timeline", threads=20, truncated=[3]))
    garbage = read_garbage_series(write_garbage_series(tmp_path / "g.garbage"))
    figure, notes = plot_timeline(
        timeline, start_ms=50, end_ms=100, threads=list(range(10)), garbage=garbage
    )
    main_axes, strip = figure.axes[0], figure.axes[1]
    assert main_axes.get_xlim() == (50.0, 100.0)
    labels = [t.get_text() for t in main_axes.get_yticklabels()]
    assert labels[:4] == ["0", "1", "2", "3*"] and len(labels) == 10
    assert "window 50.000–100.000 ms" in main_axes.get_title(loc="left")
    legend = [t.get_text() for t in main_axes.get_legend().get_texts()]
    assert legend[0] == "batch free" and "epoch change" in legend
    assert len(strip.collections[0].get_offsets()) > 0  # epoch changes projected at the bottom
    assert any("threads 3 filled their event buffer" in note for note in notes)
    assert len(figure.axes) == 3  # garbage panel


def test_timeline_command(tmp_path: Path, capsys) -> None:
    path = write_timeline(tmp_path / "run.timeline", threads=8, truncated=[5])
    out = tmp_path / "fig.png"
    assert (
        main(
            [
                "timeline",
                str(path),
                "--out",
                str(out),
                "--start-ms",
                "0",
                "--end-ms",
                "120",
                "--threads",
                "0-5",
            ]
        )
        == 0
    )
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
    assert "threads 5 filled their event buffer" in capsys.readouterr().err
    assert main(["timeline", str(path)]) == 0
    assert (tmp_path / "run.timeline.png").is_file()
    assert main(["timeline", str(path), "--start-ms", "9", "--end-ms", "3"]) == 2
    assert main(["timeline", str(tmp_path / "missing.timeline")]) == 2
