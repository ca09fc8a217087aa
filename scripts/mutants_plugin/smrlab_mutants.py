"""pytest plugin of scripts/mutants: seeds a bug into the smrlab package, in the test process.

The mutants are not shipped in the package: scripts/mutants puts this directory on PYTHONPATH
and loads the plugin with ``-p smrlab_mutants``; it patches one module when the environment
variable SMR_MUTANT names a Python mutant, before any test runs.
"""

from __future__ import annotations

import importlib
import os
import types

import numpy as np


def _numpy_with_mean_for_median() -> types.ModuleType:
    """numpy as the module sees it, but whose median is the mean."""
    proxy = types.ModuleType("numpy_mutant")
    proxy.__dict__.update(np.__dict__)
    proxy.median = np.mean
    return proxy


def _every_tuning_to_every_reclaimer() -> types.FunctionType:
    """smrlab.plan's leave_out_unread_tunings, but leaving nothing out."""

    def keep_all(configurations, options, default_reclaimer):
        return configurations, []

    return keep_all


def _one_identity_for_every_binary() -> types.FunctionType:
    """smrlab.provenance's binary_id, but the same for every binary: a rebuilt smrbench
    would reuse the rows of the build before it."""

    def same(path):
        return "0" * 16

    return same


def _interval_without_resampling() -> types.FunctionType:
    """smrlab.compare's bootstrap_ratio, but its interval is the point ratio alone."""
    from smrlab.compare import Interval

    def point(a, b, **_):
        ratio = float(np.median(b) / np.median(a))
        return Interval(ratio, ratio, ratio)

    return point


def _selection_ignored() -> types.FunctionType:
    """smrlab.grid's select, but every job is kept whatever --only and --exclude say."""

    def keep_all(jobs, only, exclude):
        return jobs

    return keep_all


def _histogram_dropped() -> types.FunctionType:
    """smrlab.export's trial_row, but the latency histogram's buckets are lost."""
    from smrlab import export

    original = export.trial_row

    def without_buckets(run):
        row, _ = original(run)
        return row, {}

    return without_buckets


def _one_machine_for_all() -> types.FunctionType:
    """smrlab.plots' by_machine, but every machine's runs drawn together."""

    def together(runs, identities):
        return {"all": ("", runs)}

    return together


# mutant name -> (module, attribute, replacement factory)
MUTANTS = {
    "py_plots_median_is_mean": ("smrlab.plots", "np", _numpy_with_mean_for_median),
    "py_report_median_is_mean": ("smrlab.report", "np", _numpy_with_mean_for_median),
    "py_hart_median_is_mean": ("smrlab.hart", "np", _numpy_with_mean_for_median),
    "py_resume_ignores_the_binary": (
        "smrlab.provenance",
        "binary_id",
        _one_identity_for_every_binary,
    ),
    "py_compare_interval_is_a_point": (
        "smrlab.compare",
        "bootstrap_ratio",
        _interval_without_resampling,
    ),
    "py_run_selection_ignored": ("smrlab.grid", "select", _selection_ignored),
    "py_export_loses_the_histogram": ("smrlab.export", "trial_row", _histogram_dropped),
    "py_machines_share_figures": ("smrlab.plots", "by_machine", _one_machine_for_all),
    "py_plan_gives_every_tuning": (
        "smrlab.plan",
        "leave_out_unread_tunings",
        _every_tuning_to_every_reclaimer,
    ),
}


def pytest_configure(config) -> None:
    name = os.environ.get("SMR_MUTANT", "")
    if name not in MUTANTS:
        return
    module_name, attribute, replacement = MUTANTS[name]
    module = importlib.import_module(module_name)
    if not hasattr(module, attribute):
        raise RuntimeError(f"mutant {name}: {module_name} has no {attribute} to replace")
    setattr(module, attribute, replacement())
