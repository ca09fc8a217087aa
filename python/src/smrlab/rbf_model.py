"""A model of remote batch free on the Epochs paper's 192-thread machine, from free() costs
measured on this one (scripts/measure/free_costs.cpp, run by scripts/measure/rbf_model.py).

The paper (Costa, Brown et al., "Are Your Epochs Too Epic? Batch Free Can Be Harmful",
PPoPP 2024, DOI 10.1145/3627535.3638491, Table 2) measures, at 192 threads, the share of time
spent in free() and the throughput under batch and amortized free. A two-core machine cannot run
that contention, but it can measure what one free costs in each situation and how much of it
holds a resource other freeing threads need. The model then puts N threads on those resources.

One freed node, under batch free at N threads freeing at once, costs

    c(N) = Z + L * R(N)

where Z is the freer's own work (no resource shared with other freers) and R the residence time
at one of L identical shared stations, each visited with probability 1/L per node for a service
S (exact mean value analysis of a closed network, :func:`mva_cycle`). Which resource a remote
free queues on decides L:

* jemalloc returns a flushed block to the bin of the arena that allocated it, under that bin's
  lock: L = N - 1 owners, and a node visits a lock as often as a flush meets a new owner.
* tcmalloc (gperftools) returns a thread cache's overflow to one central list per size class,
  whoever allocated the blocks: L = 1.
* mimalloc pushes a remote block onto its page's thread-free list with one atomic exchange: L =
  N - 1 owners (many pages each: an upper bound on its queueing).

Amortized free frees one node between operations that allocate: a remote block is then kept in
the thread's cache and reused by its next allocation, where the allocator has such a cache, and
costs what one freer measures here (``kept``), plus the queueing delay at the shared station for
the share ``flush_share`` of nodes that still reach it: for jemalloc, its flushes per freed node
under amortized free against batch free (about half, docs/reproductions.md, "Remote batch free
on a small machine"); for tcmalloc none by default (gperftools lengthens a thread's free list on
every overflow, up to 8,192 blocks, so a thread that allocates as often as it frees stops
overflowing; no counter can confirm it); for mimalloc all of them (a remote free always goes to
the owner's page, there is no cache to keep it in).

Two numbers come from the paper itself, from the one row the mechanism moves least (mimalloc,
amortized): the work per operation outside free() (``work_ns``) and how much slower a free is
on that machine than here (``scale``). Every other row is a prediction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

THREADS = 192
DURATION_S = 5.0

# Table 2 of the Epochs paper (ABtree, DEBRA, 192 threads, 5 s): throughput (ops/s), nodes
# freed over the run, and % of the time in free().
PAPER_TABLE2 = {
    ("jemalloc", "batch"): (43.4e6, 114e6, 59.5),
    ("jemalloc", "amortized"): (111.3e6, 292e6, 19.2),
    ("tcmalloc", "batch"): (25.7e6, 69e6, 52.6),
    ("tcmalloc", "amortized"): (83.5e6, 219e6, 11.8),
    ("mimalloc", "batch"): (104e6, 273e6, 15.6),
    ("mimalloc", "amortized"): (95.0e6, 249e6, 17.2),
}
CALIBRATION_ROW = ("mimalloc", "amortized")
STATIONS_PER_OWNER = {"jemalloc": True, "tcmalloc": False, "mimalloc": True}
FLUSH_SHARE = {"jemalloc": 0.5, "tcmalloc": 0.0, "mimalloc": 1.0}


def mva_cycle(customers: float, think: float, service: float, stations: int) -> float:
    """Time one customer takes to go once round a closed network: a delay ``think``, then one
    of ``stations`` identical FIFO queues chosen at random, each serving in ``service``. Exact
    mean value analysis (Reiser and Lavenberg, 1980); a fractional population interpolates
    between its neighbours."""
    if customers < 1:
        customers = 1.0
    if stations < 1:
        raise ValueError("stations must be at least 1")
    demand = service / stations  # per station, per cycle
    queue = 0.0  # customers at one station
    cycles = {}
    for n in range(1, math.ceil(customers) + 1):
        residence = demand * (1 + queue)
        throughput = n / (think + stations * residence)
        queue = throughput * residence
        cycles[n] = think + stations * residence
    low = math.floor(customers)
    high = math.ceil(customers)
    return cycles[low] + (customers - low) * (cycles[high] - cycles[low])


def serialized_demand(alone: float, together: float, sharing: float) -> float:
    """The part of one node's free that two freers cannot overlap, from the ns per free of one
    freer (``alone``) and of two at once (``together``), ``sharing`` being how much two threads
    slow each other on this machine without sharing anything (local frees: 2 cores of a VM
    share caches and memory bandwidth, possibly a physical core). Two customers on one queue
    with think time Z and service D go round in Z + D + D^2 / (Z + D): the delay is D^2 /
    alone."""
    delay = max(0.0, together / sharing - alone)
    return math.sqrt(delay * alone)


def owners_per_flush(owners: int, flushed: float) -> float:
    """Distinct owners among ``flushed`` blocks drawn uniformly from ``owners`` owners: the
    bin locks one jemalloc flush takes."""
    return owners * (1 - (1 - 1 / owners) ** flushed)


@dataclass(frozen=True)
class AllocatorCosts:
    """ns per free measured here (medians) and what the model derives from them."""

    local: float  # a block this thread allocated, freed in a batch (one freer)
    local_kept: float  # a local block freed before an allocation: touches nothing shared
    local_kept_pair: float  # the same, two freers at once: what sharing the machine costs
    kept: float  # a remote block freed before an allocation (amortized), one freer
    remote: float  # a remote block from one of many owners, freed in a long batch
    one_owner: float  # a remote block, all from one owner, one freer
    one_owner_pair: float  # the same, two freers into that owner's heap at once
    flush_size: float | None = None  # jemalloc: blocks per flush (counters)
    locks_per_node_many: float | None = None  # jemalloc: bin locks per node, many owners
    locks_per_node_one: float | None = None  # jemalloc: bin locks per node, one owner
    # What if the shared service took this many times longer, against the rest of a free, on
    # the paper's machine than here (see service_factor_matching)?
    service_factor: float = 1.0


@dataclass(frozen=True)
class Station:
    """One node's visit to the shared resource: its service and how many such resources."""

    service: float
    stations: int
    think: float


def station(allocator: str, costs: AllocatorCosts, threads: int) -> Station:
    """Where a batch-freed remote node queues at ``threads`` threads, in this machine's ns."""
    owners = max(1, threads - 1)
    if allocator == "jemalloc" and costs.flush_size and costs.locks_per_node_many is not None:
        # The bin lock: its hold, from what each extra lock taken costs one freer alone.
        extra_locks = costs.locks_per_node_many - (costs.locks_per_node_one or 0.0)
        hold = max(0.0, costs.remote - costs.one_owner) / extra_locks if extra_locks > 0 else 0.0
        locks = owners_per_flush(owners, costs.flush_size) / costs.flush_size
        think = max(0.0, costs.remote - costs.locks_per_node_many * hold)
        return Station(service=costs.service_factor * locks * hold, stations=owners, think=think)
    sharing = max(1.0, costs.local_kept_pair / costs.local_kept)
    service = serialized_demand(costs.one_owner, costs.one_owner_pair, sharing)
    stations = owners if STATIONS_PER_OWNER.get(allocator, True) else 1
    think = max(0.0, costs.remote - service)
    return Station(service=costs.service_factor * service, stations=stations, think=think)


def batch_cost(allocator: str, costs: AllocatorCosts, threads: int, freeing: float) -> float:
    """ns per batch-freed node here when ``freeing`` of ``threads`` threads free at once."""
    s = station(allocator, costs, threads)
    return mva_cycle(freeing, s.think, s.service, s.stations)


def amortized_cost(
    allocator: str, costs: AllocatorCosts, threads: int, freeing: float, flush_share: float
) -> float:
    """ns per amortized-freed node here: what one freer pays, plus, for the ``flush_share`` of
    nodes that reach the shared station, the queueing delay of ``freeing`` threads there."""
    s = station(allocator, costs, threads)
    delay = mva_cycle(freeing, s.think, s.service, s.stations) - (s.think + s.service)
    return costs.kept + flush_share * delay


@dataclass(frozen=True)
class Calibration:
    work_ns: float  # per operation, per thread, outside free(), on the paper's machine
    scale: float  # a free there costs `scale` times what it costs here
    frees_per_op: float


def paper_row(allocator: str, policy: str) -> tuple[float, float, float]:
    """(ops/s, frees per operation, ns per free per thread) of a Table 2 row."""
    ops, freed, pct = PAPER_TABLE2[(allocator, policy)]
    frees_per_op = freed / (ops * DURATION_S)
    ns_per_free = pct / 100 * THREADS * DURATION_S / freed * 1e9
    return ops, frees_per_op, ns_per_free


def share_in_free(frees_per_op: float, free_ns: float, work_ns: float) -> float:
    return frees_per_op * free_ns / (work_ns + frees_per_op * free_ns)


def spread_concurrency(cost_at, frees_per_op: float, work_ns: float, scale: float) -> float:
    """Threads in free() at once when frees are spread over time: N x the share of time in
    free, which itself depends on the cost at that concurrency (a fixed point)."""
    share = 0.1
    for _ in range(200):
        free_ns = scale * cost_at(THREADS * share)
        share = 0.5 * share + 0.5 * share_in_free(frees_per_op, free_ns, work_ns)
    return THREADS * share


def calibrate(costs: dict[str, AllocatorCosts], flush_share: dict[str, float]) -> Calibration:
    allocator, policy = CALIBRATION_ROW
    ops, frees_per_op, paper_ns = paper_row(allocator, policy)
    pct = PAPER_TABLE2[CALIBRATION_ROW][2] / 100
    work_ns = THREADS * (1 - pct) / ops * 1e9
    share = pct
    # The paper's share of time in free gives the concurrency at which the row was measured.
    here = amortized_cost(
        allocator, costs[allocator], THREADS, THREADS * share, flush_share[allocator]
    )
    return Calibration(work_ns=work_ns, scale=paper_ns / here, frees_per_op=frees_per_op)


@dataclass(frozen=True)
class Prediction:
    allocator: str
    policy: str
    concurrency: float  # threads in free() at once
    free_ns: float  # per free, on the paper's machine
    share: float  # of time in free()
    ops_per_s: float


def predict(
    costs: dict[str, AllocatorCosts], flush_share: dict[str, float], bursts: bool = True
) -> tuple[Calibration, list[Prediction]]:
    """Each allocator's Table 2 rows. ``bursts``: batch free's threads free their bags at once
    (DEBRA frees a bag when its thread sees the epoch advance, microseconds after the others;
    a bag takes milliseconds), so all N queue together; else N x the share of time in free."""
    cal = calibrate(costs, flush_share)
    out = []
    for allocator, c in costs.items():
        for policy in ("batch", "amortized"):
            _, frees_per_op, _ = paper_row(allocator, policy)

            def cost_at(freeing: float, allocator=allocator, c=c, policy=policy) -> float:
                if policy == "batch":
                    return batch_cost(allocator, c, THREADS, freeing)
                return amortized_cost(allocator, c, THREADS, freeing, flush_share[allocator])

            if policy == "batch" and bursts:
                freeing = float(THREADS)
            else:
                freeing = spread_concurrency(cost_at, frees_per_op, cal.work_ns, cal.scale)
            free_ns = cal.scale * cost_at(freeing)
            share = share_in_free(frees_per_op, free_ns, cal.work_ns)
            ops = THREADS / (cal.work_ns + frees_per_op * free_ns) * 1e9
            out.append(Prediction(allocator, policy, freeing, free_ns, share, ops))
    return cal, out


def service_factor_matching(
    costs: dict[str, AllocatorCosts], flush_share: dict[str, float], allocator: str
) -> float | None:
    """The factor on ``allocator``'s shared service at which the model gives the paper's time
    in free under batch free (bursts), all else as measured; None when no factor in [1/100,
    1000] reaches it. The calibration is redone at each factor (it includes mimalloc's)."""
    target = PAPER_TABLE2[(allocator, "batch")][2] / 100

    def share(factor: float) -> float:
        trial = dict(costs)
        trial[allocator] = replace(costs[allocator], service_factor=factor)
        _, rows = predict(trial, flush_share, bursts=True)
        return next(p.share for p in rows if (p.allocator, p.policy) == (allocator, "batch"))

    low, high = 0.01, 1000.0
    if not share(low) <= target <= share(high):
        return None
    for _ in range(60):  # bisection on a log scale
        middle = math.sqrt(low * high)
        low, high = (middle, high) if share(middle) < target else (low, middle)
    return math.sqrt(low * high)
