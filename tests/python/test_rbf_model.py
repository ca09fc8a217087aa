"""The model of remote batch free on the Epochs paper's machine (smrlab.rbf_model)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from smrlab.rbf_model import (
    CALIBRATION_ROW,
    FLUSH_SHARE,
    PAPER_TABLE2,
    AllocatorCosts,
    amortized_cost,
    batch_cost,
    mva_cycle,
    owners_per_flush,
    paper_row,
    predict,
    serialized_demand,
    service_factor_matching,
    station,
)


def test_one_customer_never_queues() -> None:
    assert mva_cycle(1, think=7.0, service=3.0, stations=1) == pytest.approx(10.0)
    assert mva_cycle(1, think=7.0, service=3.0, stations=50) == pytest.approx(10.0)


def test_customers_without_think_time_take_turns_at_one_station() -> None:
    for n in (2, 5, 40):
        assert mva_cycle(n, think=0.0, service=2.0, stations=1) == pytest.approx(2.0 * n)


def test_a_saturated_station_bounds_throughput() -> None:
    n, service = 200, 4.0
    cycle = mva_cycle(n, think=10.0, service=service, stations=1)
    assert n / cycle <= 1 / service + 1e-12
    assert n / cycle == pytest.approx(1 / service, rel=1e-3)


def test_many_stations_spread_the_queue() -> None:
    crowded = mva_cycle(64, think=10.0, service=5.0, stations=1)
    spread = mva_cycle(64, think=10.0, service=5.0, stations=64)
    assert spread < crowded
    assert spread < 2 * 15.0


def test_fractional_population_lies_between_its_neighbours() -> None:
    two = mva_cycle(2, think=10.0, service=5.0, stations=1)
    three = mva_cycle(3, think=10.0, service=5.0, stations=1)
    assert two < mva_cycle(2.5, think=10.0, service=5.0, stations=1) < three


def test_serialized_demand_inverts_two_freers_on_one_station() -> None:
    think, demand = 30.0, 12.0
    together = mva_cycle(2, think=think, service=demand, stations=1)
    assert serialized_demand(think + demand, together, sharing=1.0) == pytest.approx(demand)
    # What merely sharing the machine slows is not counted as contention.
    assert serialized_demand(think + demand, together * 1.5, sharing=1.5) == pytest.approx(demand)
    assert serialized_demand(40.0, 35.0, sharing=1.0) == 0.0


def test_owners_per_flush() -> None:
    assert owners_per_flush(1, 100) == pytest.approx(1.0)
    assert owners_per_flush(191, 1) == pytest.approx(1.0)
    # jemalloc's measured 0.526 locks per node at 64 owners and 100-block flushes:
    assert owners_per_flush(64, 100) / 100 == pytest.approx(0.516, abs=0.01)
    assert owners_per_flush(191, 100) > owners_per_flush(64, 100)


def costs(**changes: float) -> AllocatorCosts:
    base = {
        "local": 12.0,
        "local_kept": 40.0,
        "local_kept_pair": 44.0,
        "kept": 45.0,
        "remote": 65.0,
        "one_owner": 12.0,
        "one_owner_pair": 18.0,
        "flush_size": 100.0,
        "locks_per_node_many": 0.526,
        "locks_per_node_one": 0.02,
    }
    base.update(changes)
    return AllocatorCosts(**base)


def test_jemalloc_queues_at_the_owners_bin_locks() -> None:
    c = costs()
    s = station("jemalloc", c, 192)
    hold = (65.0 - 12.0) / (0.526 - 0.02)
    assert s.stations == 191
    assert s.service == pytest.approx(owners_per_flush(191, 100) / 100 * hold)
    # One freer alone pays what it measured at 64 owners, plus the locks more owners add.
    assert s.think + s.service > c.remote


def test_tcmalloc_has_one_central_list_and_mimalloc_one_per_owner() -> None:
    c = costs(flush_size=None, locks_per_node_many=None, locks_per_node_one=None)
    assert station("tcmalloc", c, 192).stations == 1
    assert station("mimalloc", c, 192).stations == 191
    assert station("tcmalloc", c, 192).service > 0


def test_more_freers_never_cost_less() -> None:
    c = costs(flush_size=None, locks_per_node_many=None, locks_per_node_one=None)
    for allocator in ("jemalloc", "tcmalloc", "mimalloc"):
        values = [batch_cost(allocator, c, 192, n) for n in (1, 8, 64, 192)]
        assert values == sorted(values)


def test_amortized_free_pays_the_queue_only_for_what_reaches_it() -> None:
    c = costs()
    assert amortized_cost("jemalloc", c, 192, 150, flush_share=0.0) == pytest.approx(c.kept)
    half = amortized_cost("jemalloc", c, 192, 150, flush_share=0.5)
    full = amortized_cost("jemalloc", c, 192, 150, flush_share=1.0)
    assert c.kept < half < full
    assert full - c.kept == pytest.approx(2 * (half - c.kept))


def test_paper_rows_give_the_tables_time_per_free() -> None:
    ops, frees_per_op, ns = paper_row("jemalloc", "batch")
    assert ops == 43.4e6
    assert frees_per_op == pytest.approx(114e6 / (43.4e6 * 5))
    assert ns == pytest.approx(0.595 * 192 * 5 / 114e6 * 1e9)


def test_the_calibration_row_is_reproduced_and_the_others_are_predicted() -> None:
    measured = {a: costs() for a in ("jemalloc", "tcmalloc", "mimalloc")}
    measured["tcmalloc"] = costs(flush_size=None, locks_per_node_many=None)
    measured["mimalloc"] = costs(flush_size=None, locks_per_node_many=None)
    cal, rows = predict(measured, FLUSH_SHARE, bursts=False)
    by_key = {(p.allocator, p.policy): p for p in rows}
    calibration = by_key[CALIBRATION_ROW]
    assert calibration.share == pytest.approx(PAPER_TABLE2[CALIBRATION_ROW][2] / 100, rel=1e-3)
    assert calibration.ops_per_s == pytest.approx(PAPER_TABLE2[CALIBRATION_ROW][0], rel=1e-3)
    assert cal.scale > 0 and math.isfinite(cal.work_ns)
    # Batch free at once: every thread queues, so it costs at least what spread frees cost.
    _, bursts = predict(measured, FLUSH_SHARE, bursts=True)
    for p in bursts:
        if p.policy == "batch":
            assert p.concurrency == 192
            assert p.free_ns >= by_key[(p.allocator, "batch")].free_ns - 1e-9


def test_the_matching_factor_gives_the_papers_batch_share() -> None:
    measured = {
        "jemalloc": costs(),
        "tcmalloc": costs(flush_size=None, locks_per_node_many=None),
        "mimalloc": costs(flush_size=None, locks_per_node_many=None),
    }
    factor = service_factor_matching(measured, FLUSH_SHARE, "jemalloc")
    assert factor is not None and factor > 0
    trial = dict(measured)
    trial["jemalloc"] = replace(measured["jemalloc"], service_factor=factor)
    _, rows = predict(trial, FLUSH_SHARE, bursts=True)
    batch = next(p for p in rows if (p.allocator, p.policy) == ("jemalloc", "batch"))
    assert batch.share == pytest.approx(PAPER_TABLE2[("jemalloc", "batch")][2] / 100, rel=1e-4)
    # A longer hold can only make batch free dearer.
    _, plain = predict(measured, FLUSH_SHARE, bursts=True)
    plain_batch = next(p for p in plain if (p.allocator, p.policy) == ("jemalloc", "batch"))
    assert (batch.share > plain_batch.share) == (factor > 1)
