"""Figures from the store: the right series on the right axes, and PNG/SVG files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import add_fake_run, fake_result
from smrlab import style
from smrlab.cli import main
from smrlab.plots import build_plots, plot_store
from smrlab.store import Store
from specfiles import write_garbage_series

RECLAIMERS = ("none", "debra", "qsbr")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """Two allocators, three reclaimers, both free policies, threads 1-8, three trials."""
    with Store(tmp_path / "r.db") as store:
        for alloc in ("jemalloc", "mimalloc"):
            for reclaimer in RECLAIMERS:
                for free in ("batch", "amortized"):
                    for threads in (1, 2, 4, 8):
                        for trial in range(3):
                            speed = threads * (2 if free == "amortized" else 1) * (1, 2, 6)[trial]
                            add_fake_run(
                                store,
                                trial=trial,
                                alloc=alloc,
                                reclaimer=reclaimer,
                                free=free,
                                threads=threads,
                                throughput=1e6 * speed,
                                rss=(100 + threads) << 20,
                                free_calls=0 if reclaimer == "none" else 100,
                            )
        yield store


def by_kind(plots, kind):
    return [plot for plot in plots if plot.kind == kind]


def test_throughput_lines_medians_and_error_bars(store: Store) -> None:
    plots, _ = build_plots(store, "exp")
    throughput = by_kind(plots, "throughput")
    assert {p.facet["alloc"] for p in throughput} == {"jemalloc", "mimalloc"}
    ax = throughput[0].figure.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["none", "none_af", "debra", "debra_af", "qsbr", "qsbr_af"]
    assert ax.get_xlabel() == "threads" and ax.get_ylabel() == "throughput (Mops/s)"
    series = {container.get_label(): container.lines[0] for container in ax.containers}
    none_af = series["none_af"]
    assert [round(x) for x in none_af.get_xdata()] == [1, 2, 4, 8]
    # trials give 1x, 2x, 6x: median 2x (mean 3x); amortized doubles; in Mops/s.
    assert list(none_af.get_ydata()) == pytest.approx([4.0, 8.0, 16.0, 32.0])
    assert "hardware threads" in [t.get_text() for t in ax.texts]  # 4 is inside 1..8
    assert "jemalloc" in ax.get_title(loc="left") or "mimalloc" in ax.get_title(loc="left")


def test_memory_figure(store: Store) -> None:
    plots, _ = build_plots(store, "exp")
    (memory, _) = by_kind(plots, "memory")
    ax = memory.figure.axes[0]
    assert ax.get_ylabel() == "peak memory, RSS (MiB)"
    series = {container.get_label(): container.lines[0] for container in ax.containers}
    assert list(series["debra"].get_ydata()) == pytest.approx([101, 102, 104, 108])


def test_remote_frees_only_for_runs_that_counted_them(store: Store, tmp_path: Path) -> None:
    plots, _ = build_plots(store, "exp")
    assert by_kind(plots, "remote_frees") == []  # nothing counted
    with Store(tmp_path / "counted.db") as counted:
        for free, remote in (("batch", 6), ("amortized", 3)):
            for threads in (1, 2):
                # fake_result frees 9 nodes: 6 and 3 of them remote at 2 threads.
                add_fake_run(
                    counted, free=free, threads=threads, remote_frees=remote if threads > 1 else 0
                )
        add_fake_run(counted, reclaimer="qsbr", threads=2)  # not counted: no series
        plots, _ = build_plots(counted, "exp")
    (remote,) = by_kind(plots, "remote_frees")
    ax = remote.figure.axes[0]
    assert ax.get_ylabel() == "remote frees (% of freed)"
    series = {container.get_label(): container.lines[0] for container in ax.containers}
    assert set(series) == {"debra", "debra_af"}
    assert list(series["debra"].get_ydata()) == pytest.approx([0.0, 100 * 6 / 9])
    assert list(series["debra_af"].get_ydata()) == pytest.approx([0.0, 100 * 3 / 9])


def test_rbf_figure_against_the_minimum_epoch(tmp_path: Path) -> None:
    with Store(tmp_path / "rbf.db") as store:
        for alloc in ("jemalloc", "mimalloc"):
            for epoch in (0, 20000):
                for free in ("batch", "amortized"):
                    for trial in range(3):
                        flushes = (9 if free == "batch" and epoch else 3) * (trial + 1)
                        result = fake_result(
                            alloc=alloc,
                            free=free,
                            allocator_counters=(
                                {"tcache_flushes": flushes} if alloc == "jemalloc" else None
                            ),
                        )
                        result["config"]["min_epoch_us"] = epoch
                        key = json.dumps(
                            {"alloc": alloc, "free": free, "min_epoch_us": epoch, "trial": trial}
                        )
                        assert store.add_run("rbf", key, trial, result, ["smrbench"])
        plots, _ = build_plots(store, "rbf")
    (rbf,) = by_kind(plots, "rbf")
    time_jemalloc, time_mimalloc, flushes_jemalloc, flushes_mimalloc = rbf.figure.axes
    assert [ax.get_title() for ax in (time_jemalloc, time_mimalloc)] == ["jemalloc", "mimalloc"]
    assert [t.get_text() for t in flushes_jemalloc.get_xticklabels()] == ["0", "20"]
    # fake_result: 0.05 s in free over 2 threads x 1 s; 9 nodes freed.
    assert [p.get_height() for p in time_mimalloc.patches] == pytest.approx([2.5] * 4)
    # Median trial (x2): batch at 0 ms, batch at 20 ms, amortized at 0 and 20 ms.
    heights = [p.get_height() for p in flushes_jemalloc.patches]
    assert heights == pytest.approx([1000 * 6 / 9, 1000 * 18 / 9, 1000 * 6 / 9, 1000 * 6 / 9])
    assert not flushes_mimalloc.patches
    assert "no such counter" in flushes_mimalloc.texts[0].get_text()


def test_af_bars_at_the_highest_thread_count(store: Store) -> None:
    plots, _ = build_plots(store, "exp")
    bars = by_kind(plots, "af_bars")
    assert len(bars) == 2
    ax = bars[0].figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(RECLAIMERS)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "ORIG (batch free)",
        "AF (amortized free)",
    ]
    heights = [patch.get_height() for patch in ax.patches]
    assert heights == pytest.approx([16, 16, 16, 32, 32, 32])  # 8 threads, median trial
    assert "8 threads" in ax.get_title(loc="left")
    assert [t.get_text() for t in ax.texts if t.get_text().startswith("×")] == ["×2.00"] * 3


def test_free_latency_skips_reclaimers_that_never_free(store: Store) -> None:
    plots, _ = build_plots(store, "exp")
    latency = by_kind(plots, "free_latency")[0]
    ax = latency.figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["debra", "debra_af", "qsbr", "qsbr_af"]
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["p50", "p99", "p99.9", "max"]


def test_varying_options_split_figures(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        for stall in (False, True):
            for threads in (1, 2):
                add_fake_run(store, stall=stall, threads=threads)
        plots, _ = build_plots(store, "exp")
    names = sorted(p.name for p in by_kind(plots, "throughput"))
    assert names == [
        "throughput-dgt_bst-jemalloc-i50-d50-nostall",
        "throughput-dgt_bst-jemalloc-i50-d50-stall",
    ]


def add_tuned_run(store: Store, threads: int, speed: float, **tunings: Any) -> None:
    """A run whose config holds reclaimer tunings (null where its reclaimer reads none)."""
    reclaimer = str(tunings.pop("reclaimer"))
    result = fake_result(reclaimer=reclaimer, threads=threads, throughput=1e6 * speed)
    result["config"] |= tunings
    key = json.dumps({"reclaimer": reclaimer, "threads": threads, **tunings}, sort_keys=True)
    assert store.add_run("exp", key, 0, result, ["smrbench"])


def test_a_tuning_some_reclaimers_do_not_read_is_a_series_not_a_facet(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        for threads in (1, 2):
            add_tuned_run(store, threads, 4, reclaimer="ebr", fence=None)
            add_tuned_run(store, threads, 3, reclaimer="hp", fence="asymmetric")
            add_tuned_run(store, threads, 2, reclaimer="hp", fence="symmetric")
        plots, _ = build_plots(store, "exp")
    (throughput,) = by_kind(plots, "throughput")
    assert "fence" not in throughput.facet and "fence" not in throughput.name
    ax = throughput.figure.axes[0]
    series = {container.get_label(): container.lines[0] for container in ax.containers}
    assert list(series) == ["ebr", "hp (fence asymmetric)", "hp (fence symmetric)"]
    assert list(series["hp (fence symmetric)"].get_ydata()) == pytest.approx([2.0, 2.0])
    colors = [series[name].get_color() for name in series]
    assert colors[1] == style.reclaimer_color("hp")  # the first variant keeps hp's colour
    assert len(set(colors)) == 3


def test_one_value_of_a_tuning_some_reclaimers_read_is_a_setting(tmp_path: Path) -> None:
    # Hart's settings: quiescent_every for qsbr, advance_every for ebr, each null for the other.
    with Store(tmp_path / "r.db") as store:
        for threads in (1, 2):
            add_tuned_run(
                store, threads, 4, reclaimer="ebr", advance_every=100, quiescent_every=None
            )
            add_tuned_run(
                store, threads, 3, reclaimer="qsbr", advance_every=None, quiescent_every=100
            )
        plots, _ = build_plots(store, "exp")
    (throughput,) = by_kind(plots, "throughput")
    assert throughput.name == "throughput-dgt_bst-jemalloc-i50-d50"
    labels = [t.get_text() for t in throughput.figure.axes[0].get_legend().get_texts()]
    assert labels == ["qsbr", "ebr"]


def test_a_tuning_every_reclaimer_reads_still_splits_figures(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        for threads in (1, 2):
            add_tuned_run(store, threads, 3, reclaimer="hp", fence="asymmetric")
            add_tuned_run(store, threads, 2, reclaimer="hp", fence="symmetric")
        plots, _ = build_plots(store, "exp")
    assert sorted(p.facet["fence"] for p in by_kind(plots, "throughput")) == [
        "asymmetric",
        "symmetric",
    ]


def test_pooled_and_unpooled_runs_never_share_a_figure(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        for threads in (1, 2):
            add_fake_run(store, trial=0, threads=threads)  # before the pool existed
            add_fake_run(store, trial=1, threads=threads, pool_nodes=0)  # no pool, said so
            add_fake_run(store, trial=0, threads=threads, pool_nodes=2000, on_empty="spin")
            add_fake_run(store, trial=0, threads=threads, pool_nodes=2000, on_empty="yield")
        plots, _ = build_plots(store, "exp")
    throughput = by_kind(plots, "throughput")
    assert sorted(p.name for p in throughput) == [
        "throughput-dgt_bst-jemalloc-i50-d50-on_emptyspin-pool_nodes2000",
        "throughput-dgt_bst-jemalloc-i50-d50-on_emptyyield-pool_nodes2000",
        "throughput-dgt_bst-jemalloc-i50-d50-pool_nodes0",  # no pool: no on_empty, no None
    ]
    titles = " | ".join(p.title for p in throughput)
    assert "pool nodes 2000" in titles and "on empty spin" in titles
    assert "None" not in titles


def test_recorded_file_paths_do_not_split_figures(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        for free in ("batch", "amortized"):
            result = fake_result(free=free)
            result["config"] |= {
                "timeline": f"/x/{free}.timeline",
                "garbage_series": f"/x/{free}.garbage",
            }
            store.add_run("exp", f'{{"free":"{free}","trial":0}}', 0, result, [])
        plots, _ = build_plots(store, "exp")
    assert len(by_kind(plots, "throughput")) == 1
    assert len(by_kind(plots, "af_bars")) == 1  # batch and amortized side by side


def test_garbage_per_epoch_from_referenced_files(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        for free in ("batch", "amortized"):
            path = write_garbage_series(tmp_path / f"{free}.garbage", free=free)
            key = f'{{"free":"{free}","trial":0}}'
            store.add_run("exp", key, 0, fake_result(free=free), [], files={"garbage_series": path})
        plots, notes = build_plots(store, "exp")
        (garbage,) = by_kind(plots, "garbage")
        titles = [ax.get_title(loc="left") for ax in garbage.figure.axes]
        assert titles[0].startswith("debra: batch free") and "amortized" in titles[1]
        assert garbage.figure.axes[1].get_xlabel() == "epoch"
        (tmp_path / "batch.garbage").unlink()
        _, notes = build_plots(store, "exp")
        assert any("missing" in note for note in notes)


def test_garbage_skipped_with_a_note(store: Store) -> None:
    _, notes = build_plots(store, "exp")
    assert any("garbage per epoch skipped" in note for note in notes)


def test_plot_writes_png_and_svg_with_legends(store: Store, tmp_path: Path) -> None:
    written, _ = plot_store(store, tmp_path / "out")
    pngs = [p for p in written if p.suffix == ".png"]
    svgs = [p for p in written if p.suffix == ".svg"]
    assert len(pngs) == len(svgs) == 8  # throughput, memory, bars, latency × 2 allocators
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    svg = (tmp_path / "out" / "exp" / "throughput-dgt_bst-jemalloc-i50-d50.svg").read_text()
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    for label in ("none_af", "debra", "qsbr_af", "threads", "throughput (Mops/s)"):
        assert label in texts


def test_plot_command(store: Store, tmp_path: Path, capsys) -> None:
    db = str(store.path)
    assert main(["plot", "--db", db, "--out", str(tmp_path / "o"), "--experiment", "exp"]) == 0
    assert "wrote 16 files" in capsys.readouterr().err
    assert main(["plot", "--db", db, "--experiment", "nope"]) == 2
    assert main(["plot", "--db", str(tmp_path / "none.db")]) == 2
    assert "no result store" in capsys.readouterr().err


def test_axes_and_columns_are_named_from_smrbenchs_statistics() -> None:
    """Labels and units come from smrbench's description of its statistics, scaled to the
    units papers use."""
    from smrlab.statistics import STATISTICS, shown

    assert all(row["label"] and row["unit"] for row in STATISTICS.values())
    rss = shown("run", "peak_rss_bytes")
    assert (rss.title, rss.scale(3 * 2**20)) == ("peak memory, RSS (MiB)", 3.0)
    assert shown("run", "throughput_ops_per_s").scale(2.5e6) == 2.5
    assert shown("reclaimer", "garbage_peak").title == "garbage (nodes)"
    with pytest.raises(KeyError):
        shown("run", "no_such_statistic")
