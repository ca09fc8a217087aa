"""Hart-form figures: the swept factor found in the runs, Hart's measure, series names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from matplotlib.container import BarContainer

from conftest import fake_result
from smrlab import hart
from smrlab.plots import build_plots
from smrlab.store import Store


def add(store: Store, experiment: str, trial: int, ns: float | None, **config: Any) -> None:
    """A stored single-trial run whose time per operation is ``ns`` (CPU time scales with
    threads, as smrbench reports it); ``None``: no operation completed."""
    threads = config.get("threads", 1)
    cpus = config.pop("cpus", 2)
    result = fake_result(
        ds=config.pop("ds", "hm_list"),
        reclaimer=config.pop("reclaimer", "qsbr"),
        threads=threads,
        insert=config.pop("insert", 0),
        erase=config.pop("erase", 0),
        hardware_threads=cpus,
    )
    result["config"] |= config
    result["exec_time_per_op_ns"] = ns
    result["cpu_time_per_op_ns"] = None if ns is None else ns * threads
    key = json.dumps({**result["config"], "trial": trial}, sort_keys=True)
    assert store.add_run(experiment, key, trial, result, ["smrbench"])


def figures(store: Store, experiment: str):
    plots, _ = build_plots(store, experiment)
    return [p for p in plots if p.kind == "hart"]


def series(plot) -> dict[str, tuple[list[float], list[float]]]:
    ax = plot.figure.axes[0]
    return {
        c.get_label(): (list(c.lines[0].get_xdata()), list(c.lines[0].get_ydata()))
        for c in ax.containers
    }


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path / "r.db") as store:
        yield store


def test_only_hart_experiments_get_hart_figures(store: Store) -> None:
    for name in ("hart_x", "other"):
        for reclaimer in ("qsbr", "hp"):
            for key_range in (2, 20, 200):
                add(
                    store,
                    name,
                    0,
                    100.0,
                    reclaimer=reclaimer,
                    key_range=key_range,
                    prefill_target=key_range // 2,
                )
    assert figures(store, "hart_x")
    assert figures(store, "other") == []


def test_list_length_sweep_uses_cpu_time_medians_and_hart_names(store: Store) -> None:
    # Three trials per point: 1x, 5x and 2x a base: the median is 2x (a mean would be 2.67x).
    for reclaimer, base in (("qsbr", 10.0), ("hp", 30.0), ("lfrc", 300.0)):
        for length in (1, 10, 100):
            for trial, factor in enumerate((1, 5, 2)):
                add(
                    store,
                    "hart_fig8",
                    trial,
                    base * length * factor,
                    reclaimer=reclaimer,
                    key_range=2 * length,
                    prefill_target=length,
                )
    plots = figures(store, "hart_fig8")
    # With LFRC, and Figure 8's copy without it.
    assert [p.name.endswith("-without-lfrc") for p in plots] == [False, True]
    lines = series(plots[0])
    assert list(lines) == ["QSBR", "HPBR", "LFRC"]
    xs, ys = lines["HPBR"]
    assert xs == [1, 10, 100]
    assert ys == pytest.approx([60.0, 600.0, 6000.0])
    ax = plots[0].figure.axes[0]
    assert ax.get_xlabel() == "list length (elements)"
    assert ax.get_ylabel() == "CPU time per operation (ns)"
    assert list(series(plots[1])) == ["QSBR", "HPBR"]


def test_more_threads_than_cpus_switches_the_whole_figure_to_execution_time(
    store: Store,
) -> None:
    for threads in (1, 2, 4, 8, 16, 32):
        add(store, "hart_fig12", 0, 50.0, threads=threads, cpus=2)
    (plot,) = figures(store, "hart_fig12")
    ax = plot.figure.axes[0]
    assert ax.get_ylabel() == "execution time per operation (ns)"
    assert ax.get_xscale() == "log"
    _, ys = series(plot)["QSBR"]
    assert ys == pytest.approx([50.0] * 6)  # execution time, not x threads


def test_cpu_time_while_threads_fit(store: Store) -> None:
    for threads in (1, 2):
        for reclaimer in ("qsbr", "hp"):
            for update in (0, 25, 50):
                add(
                    store,
                    "hart_t",
                    0,
                    10.0,
                    threads=threads,
                    reclaimer=reclaimer,
                    insert=update,
                    erase=update,
                    cpus=2,
                )
    plots = figures(store, "hart_t")
    # Update fraction is swept (3 values); the two thread counts split figures.
    assert len(plots) == 2
    assert {p.facet["threads"] for p in plots} == {1, 2}
    two = next(p for p in plots if p.facet["threads"] == 2)
    assert two.figure.axes[0].get_xlabel() == "update fraction"
    assert series(two)["QSBR"] == ([0.0, 0.5, 1.0], pytest.approx([20.0] * 3))


def test_lf_and_cr_series_and_the_spinlock_only_with_none(store: Store) -> None:
    for ds in ("hm_list", "cr_list", "lock_list"):
        for reclaimer in ("qsbr", "none"):
            for update in (0, 25, 50):
                add(
                    store,
                    "hart_cr",
                    0,
                    10.0,
                    ds=ds,
                    reclaimer=reclaimer,
                    insert=update,
                    erase=update,
                )
    (plot,) = figures(store, "hart_cr")
    assert list(series(plot)) == ["LF-none", "LF-QSBR", "CR-none", "CR-QSBR", "spinlock"]


def test_base_costs_are_bars_per_structure_and_workload(store: Store) -> None:
    for ds in ("hm_list", "lock_list"):
        for reclaimer in ("none", "qsbr", "hp"):
            for update in (0, 50):
                add(
                    store,
                    "hart_fig6",
                    0,
                    40.0 if reclaimer == "hp" else 20.0,
                    ds=ds,
                    reclaimer=reclaimer,
                    insert=update,
                    erase=update,
                )
    (plot,) = figures(store, "hart_fig6")
    ax = plot.figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "hm_list\nread-only",
        "hm_list\nupdate-only",
        "lock_list\nread-only",
        "lock_list\nupdate-only",
    ]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["none", "QSBR", "HPBR", "spinlock"]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    hp_bars = bars[labels.index("HPBR")]
    assert [bar.get_height() for bar in hp_bars] == pytest.approx([40.0, 40.0])
    # The spinlock's groups hold one bar, centred on its tick.
    spinlock = bars[labels.index("spinlock")]
    assert [bar.get_x() + bar.get_width() / 2 for bar in spinlock] == pytest.approx([2, 3])


def test_hps_fence_modes_are_two_series_of_one_figure(store: Store) -> None:
    # Figure 8 in both fence modes: hp's fence is a series; qsbr reads none (null).
    for reclaimer, fence, base in (
        ("qsbr", None, 10.0),
        ("hp", "asymmetric", 20.0),
        ("hp", "symmetric", 40.0),
    ):
        for length in (1, 10, 100):
            add(
                store,
                "hart_fence",
                0,
                base * length,
                reclaimer=reclaimer,
                fence=fence,
                key_range=2 * length,
                prefill_target=length,
            )
    (plot,) = figures(store, "hart_fence")
    assert plot.facet == {}
    lines = series(plot)
    assert list(lines) == ["QSBR", "HPBR (fence asymmetric)", "HPBR (fence symmetric)"]
    assert lines["HPBR (fence symmetric)"][1] == pytest.approx([40.0, 400.0, 4000.0])
    ax = plot.figure.axes[0]
    colors = {c.get_label(): c.lines[0].get_color() for c in ax.containers}
    assert len(set(colors.values())) == 3
    _, rows = hart.summary(store.runs("hart_fence"))
    assert {row["series"] for row in rows} == set(lines)


def test_base_cost_bars_keep_hps_fence_modes_apart(store: Store) -> None:
    for reclaimer, fence, ns in (
        ("none", None, 10.0),
        ("hp", "asymmetric", 20.0),
        ("hp", "symmetric", 30.0),
    ):
        for update in (0, 50):
            add(
                store,
                "hart_fig6",
                0,
                ns,
                reclaimer=reclaimer,
                fence=fence,
                insert=update,
                erase=update,
            )
    (plot,) = figures(store, "hart_fig6")
    ax = plot.figure.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["none", "HPBR (fence asymmetric)", "HPBR (fence symmetric)"]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert [b.get_height() for b in bars[2]] == pytest.approx([30.0, 30.0])


def test_a_point_where_no_operation_completed_is_named_not_drawn(store: Store) -> None:
    for threads in (1, 2, 4):
        add(store, "hart_stall", 0, None if threads == 4 else 30.0, threads=threads)
    (plot,) = figures(store, "hart_stall")
    xs, _ = series(plot)["QSBR"]
    assert xs == [1, 2]
    notes = [t.get_text() for t in plot.figure.axes[0].texts]
    assert any("no operation completed: QSBR at 4" in n for n in notes)


def test_series_names() -> None:
    assert hart.series_name("hm_list", "hp", {"LF"}) == "HPBR"
    assert hart.series_name("cr_list", "qsbr", {"LF", "CR"}) == "CR-QSBR"
    assert hart.series_name("lock_list", "none", {"LF", "spinlock"}) == "spinlock"
    assert hart.series_name("hm_list", "debra", {"LF"}) == "debra"


HART_EXPERIMENTS = sorted((Path(__file__).resolve().parents[2] / "experiments").glob("hart_*.toml"))


@pytest.mark.parametrize("path", HART_EXPERIMENTS, ids=lambda p: p.stem)
def test_each_hart_experiment_runs_and_draws_its_figure(
    tmp_path: Path, smrbench: Path, path: Path
) -> None:
    """Every configuration of the shipped file runs with the real smrbench, validated (at 50 ms
    a trial, one trial), and the stored runs give at least one Hart-form figure."""
    from smrlab.cli import main

    experiment = tmp_path / path.name
    experiment.write_text(path.read_text() + "\n[sizes.test]\nduration = 0.05\ntrials = 1\n")
    db = tmp_path / "r.db"
    code = main(
        ["run", str(experiment), "--db", str(db), "--smrbench", str(smrbench), "--size", "test"]
    )
    assert code == 0
    with Store(db) as store:
        runs = store.runs(path.stem)
        assert runs and all(r["validated"] == 1 for r in runs)
        drawn = figures(store, path.stem)
    assert drawn, f"{path.stem}: no Hart-form figure"


def test_the_report_has_a_hart_section_with_the_numbers(store: Store, tmp_path: Path) -> None:
    from smrlab.report import write_report

    for reclaimer in ("qsbr", "hp"):
        for threads in (1, 2, 4):
            for trial, factor in enumerate((1, 5, 2)):
                add(store, "hart_fig12", trial, 10.0 * factor, reclaimer=reclaimer, threads=threads)
    add(store, "other", 0, 10.0)
    path, _ = write_report(store, tmp_path / "report")
    page = path.read_text()
    assert page.index('<h2 id="exp-other">') < page.index('<h2 id="hart">')
    assert page.index('<h2 id="hart">') < page.index('<h2 id="exp-hart_fig12">')
    assert "Hart&#x27;s measure (median over trials)" in page or "Hart's measure" in page
    # Medians 20 (of 10, 50, 20) with spread (50 - 10) / 20 = 200%, execution time (4 > 2 CPUs).
    assert "median execution time per operation (ns)" in page
    assert page.count(">200%<") == 6
    # Rows in the figure's order: series by Hart's order, then the swept value numerically.
    title, rows = hart.summary(store.runs("hart_fig12"))
    assert title == "execution time per operation (ns)"
    assert [(r["series"], r["at"]) for r in rows] == [
        (s, f"threads {t}") for s in ("QSBR", "HPBR") for t in (1, 2, 4)
    ]
    assert rows[0]["median"] == 20.0 and rows[0]["trials"] == 3
