"""smrlab reproduce: every experiment docs/reproductions.md shows, run in one command.

The page is the list: each of its section headings names the experiment file (or the
measurement script) behind the section, and this runs the experiment files in the page's order,
at one size, into one store, with one smrbench. What a reader needs to compare the page with a
new run is written beside the store: for each experiment, the section it belongs to, its wall
time, its trials, and the machine's load when it began, with the commit of the binary and the
total time. Sections measured by scripts (scripts/measure/) are listed as such, not run: each
takes its own arguments, given in its section.

Re-running resumes: an experiment's trials already stored by this binary on this machine are
skipped, as with smrlab run.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from smrlab.errors import UsageError
from smrlab.outputs import write_atomically
from smrlab.progress import format_duration

# A heading: "## Epochs paper, Figure 1 — `epochs_fig1.toml`".
_HEADING = re.compile(r"^#{2,6}\s+(?P<title>.+?)\s*$")
# An experiment file named in a heading: `nbr_e3.toml` or `experiments/stm_layout.toml`; a name
# with a wildcard (`hart_*.toml`) introduces subsections that name each file.
_EXPERIMENT = re.compile(r"`(?:experiments/)?(?P<name>[A-Za-z0-9_.-]+)\.toml`")
_SCRIPT = re.compile(r"`(?P<path>scripts/measure/[A-Za-z0-9_.-]+)`")


@dataclass(frozen=True)
class Section:
    """A heading of the page and what it names: experiment files, or a measurement script."""

    title: str
    experiments: tuple[Path, ...]
    scripts: tuple[str, ...]


def read_page(page: Path, experiments_dir: Path) -> list[Section]:
    """The page's sections that name an experiment file or a measurement script, in order.

    UsageError if the page cannot be read or names an experiment file that does not exist."""
    try:
        text = page.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot read the page {page}: {error.strerror}") from None
    sections = []
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        heading = None if in_code else _HEADING.match(line)
        if heading is None:
            continue
        title = heading["title"]
        names = [m["name"] for m in _EXPERIMENT.finditer(title)]
        scripts = tuple(m["path"] for m in _SCRIPT.finditer(title))
        if not names and not scripts:
            continue
        paths = []
        for name in names:
            path = experiments_dir / f"{name}.toml"
            if not path.is_file():
                raise UsageError(
                    f"{page}: the section '{_plain(title)}' names {name}.toml, "
                    f"which is not in {experiments_dir}"
                )
            paths.append(path)
        sections.append(Section(_plain(title), tuple(paths), scripts))
    return sections


def _plain(title: str) -> str:
    return title.replace("`", "")


def experiments_in_order(sections: Sequence[Section]) -> list[tuple[Path, str]]:
    """Each experiment file once, with the title of the first section that names it."""
    seen: dict[Path, str] = {}
    for section in sections:
        for path in section.experiments:
            seen.setdefault(path, section.title)
    return list(seen.items())


def choose(experiments: list[tuple[Path, str]], only: Sequence[str]) -> list[tuple[Path, str]]:
    """The experiments named in ``only`` (file stems; all when empty), in page order.
    UsageError naming any that the page does not show."""
    if not only:
        return experiments
    wanted = {name.removesuffix(".toml") for item in only for name in item.split(",") if name}
    known = {path.stem for path, _ in experiments}
    unknown = sorted(wanted - known)
    if unknown:
        raise UsageError(
            f"--only {', '.join(unknown)}: not an experiment the page shows "
            f"(smrlab reproduce --list shows them)"
        )
    return [(path, title) for path, title in experiments if path.stem in wanted]


@dataclass
class Outcome:
    """One experiment's part of the run."""

    experiment: str
    section: str
    seconds: float
    ran: int
    stored_before: int
    failed: int
    load_average: float  # the 1-minute load average when it began
    skipped_reason: str = ""  # set when the experiment could not run at this size


def run_all(
    chosen: list[tuple[Path, str]],
    *,
    size: str,
    bench: Any,
    db: Path,
    timeout: float | None,
    run_experiment: Any,
) -> list[Outcome]:
    """Runs each chosen experiment in turn; returns what each took. An experiment that cannot
    run (no such size, a configuration smrbench refuses before any trial) is reported and left
    out, not fatal: the page's other sections still run."""
    from smrlab.grid import load_experiment

    outcomes = []
    started = time.monotonic()
    for index, (path, section) in enumerate(chosen, 1):
        load = os.getloadavg()[0]
        print(
            f"smrlab reproduce: [{index}/{len(chosen)}] {path.name} ({section}); "
            f"{format_duration(time.monotonic() - started)} so far, load {load:.2f}",
            file=sys.stderr,
        )
        begin = time.monotonic()
        try:
            summary = run_experiment(load_experiment(path, size), bench, db, timeout=timeout)
        except UsageError as error:
            print(f"smrlab reproduce: {path.name} left out: {error}", file=sys.stderr)
            outcomes.append(Outcome(path.stem, section, 0.0, 0, 0, 0, load, str(error)))
            continue
        outcomes.append(
            Outcome(
                path.stem,
                section,
                time.monotonic() - begin,
                summary.ran,
                summary.skipped,
                len(summary.failures),
                load,
            )
        )
    return outcomes


def summary_markdown(
    outcomes: Sequence[Outcome], sections: Sequence[Section], build: dict[str, Any], size: str
) -> str:
    """The run's record: the build, each experiment's time and load, the script sections."""
    commit = build.get("commit") or "unknown"
    dirty = " (with uncommitted changes)" if build.get("dirty") else ""
    total = sum(o.seconds for o in outcomes)
    lines = [
        f"# smrlab reproduce: size {size}, smrbench at {commit}{dirty}",
        "",
        f"{len(outcomes)} experiments in {format_duration(total)} of running.",
        "",
        "| experiment | section | wall time | trials run | already stored | failed | "
        "load at start |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for o in outcomes:
        if o.skipped_reason:
            lines.append(f"| {o.experiment} | {o.section} | left out: {o.skipped_reason} ||||")
            continue
        lines.append(
            f"| {o.experiment} | {o.section} | {format_duration(o.seconds)} | {o.ran} | "
            f"{o.stored_before} | {o.failed} | {o.load_average:.2f} |"
        )
    scripts = [(s.title, script) for s in sections for script in s.scripts if not s.experiments]
    if scripts:
        lines += ["", "Sections measured by a script (not run here; see each section):", ""]
        lines += [f"- {title}: `{script}`" for title, script in scripts]
    return "\n".join(lines) + "\n"


def write_summary(
    out: Path,
    outcomes: Sequence[Outcome],
    sections: Sequence[Section],
    build: dict[str, Any],
    size: str,
) -> None:
    """summary.md and summary.json in ``out``, each whole or not at all."""
    out.mkdir(parents=True, exist_ok=True)
    markdown = summary_markdown(outcomes, sections, build, size)
    write_atomically(out / "summary.md", lambda p: p.write_text(markdown, encoding="utf-8"))
    record = {"size": size, "build": build, "experiments": [asdict(o) for o in outcomes]}
    text = json.dumps(record, indent=1) + "\n"
    write_atomically(out / "summary.json", lambda p: p.write_text(text, encoding="utf-8"))
