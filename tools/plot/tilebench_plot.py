#!/usr/bin/env python3
"""Plots of tilebench results files, as SVG and PNG.

  tilebench_plot.py sweep RUN_DIR... --out DIR [--op OP] [--view packed]
                    [--metric time|gbps] [--scope auto|gap_free|eager_gpu|host]
      one figure per operation: time per call (or GB/s) against the minimal
      bytes a call moves, one line per provider, log axes, the run's device
      copy ceiling drawn when recorded -> DIR/sweep-OP-METRIC.{svg,png}

  tilebench_plot.py ratio RUN_DIR... --out DIR [--op OP] [--view packed]
                    [--scope auto|gap_free|eager_gpu|host]
      native / other provider per case, with a line at 1 -> DIR/ratio.{svg,png}.
      A replay (schema 4 and later) gives each ratio's median and interval
      (replay.cases[].native_over_framework.*.*.per_call); a single run gives
      the ratio of p50s, which has no interval and is drawn as a point alone.

RUN_DIR holds results.json or results.json.gz (a path to such a file works
too). The figure per case is the one `tilebench report --format csv` ranks
by (docs/results-schema.md, "Report formats"): per call p50 over the scope's
samples, gap-free GPU control, else eager GPU control, else host E2E. With
--scope auto every plotted point uses the best scope that all the selected
cases have, so one figure never mixes scopes. In a sweep, a case measured
more than once (replay rounds, several runs) is plotted at the median of its
p50s; in a ratio plot each run's native / provider pair is a point of its own.

Bad input (a missing directory, a file that is not a tilebench results file,
an unknown schema version, nothing to plot) exits 2 with a message; an
existing output file is never overwritten. Needs matplotlib (Debian's
python3-matplotlib) for drawing only: input is checked without it.
"""
import argparse
import gzip
import json
import os
import statistics
import sys
import zlib

KNOWN_SCHEMA_VERSIONS = range(1, 10)  # docs/results-schema.md, versions 1-9
SCOPES = ("gap_free", "eager_gpu", "host")
SCOPE_TITLES = {"gap_free": "host-gap-free GPU control", "eager_gpu": "eager GPU control",
                "host": "host E2E"}


class Refusal(Exception):
    """Input the tool will not plot: exit 2 with the message."""


# ----------------------------------------------------------------- input

def results_path(run):
    if os.path.isfile(run):
        return run
    if not os.path.isdir(run):
        raise Refusal(f"{run}: no such run directory")
    for name in ("results.json", "results.json.gz"):
        path = os.path.join(run, name)
        if os.path.isfile(path):
            return path
    raise Refusal(f"{run}: holds no results.json or results.json.gz")


def load_results(run):
    """The checked document of one run: a tilebench results file of a known schema."""
    path = results_path(run)
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError) as e:
        raise Refusal(f"{path}: not a results file ({e})") from None
    if not isinstance(doc, dict) or doc.get("schema") != "tilebench.results":
        raise Refusal(f"{path}: not a tilebench results file (schema is not \"tilebench.results\")")
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or \
            version not in KNOWN_SCHEMA_VERSIONS:
        raise Refusal(f"{path}: unknown results schema version {version!r} (this tool reads "
                      f"{KNOWN_SCHEMA_VERSIONS.start}-{KNOWN_SCHEMA_VERSIONS.stop - 1})")
    if not isinstance(doc.get("cases"), list):
        raise Refusal(f"{path}: results file without a cases array")
    return doc


def samples(phase):
    """The per-call samples of a timed phase, or None when it has none."""
    values = phase.get("per_call_ns") if isinstance(phase, dict) else None
    if not isinstance(values, list):
        return None
    values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return values or None


def scope_samples(case):
    """{scope: samples} for every scope the case measured (the report's three)."""
    device = case.get("device") if isinstance(case.get("device"), dict) else {}
    throughput = device.get("throughput") if isinstance(device.get("throughput"), dict) else {}
    gap_free = throughput.get("gap_free") if isinstance(throughput.get("gap_free"), dict) else {}
    mode = gap_free.get("mode")
    found = {}
    if mode == "eager":
        found["gap_free"] = samples(throughput.get("control"))
    elif isinstance(mode, str):
        found["gap_free"] = samples(((throughput.get("batch_modes") or {}).get(mode) or {})
                                    .get("control"))
    if device.get("control_complete") is True:
        found["eager_gpu"] = samples(throughput.get("control"))
    found["host"] = samples((case.get("host") or {}).get("throughput"))
    return {k: v for k, v in found.items() if v}, mode


class Point:
    """One valid case's figures: what the plots draw."""

    def __init__(self, case, run_index, ceiling):
        self.op = case.get("op")
        self.m, self.n = case.get("m"), case.get("n")
        self.view = (case.get("input_view") or {}).get("kind")
        self.provider = case.get("provider")
        self.variant = case.get("variant")
        self.bytes = case.get("minimal_bytes")
        self.run_index = run_index
        self.ceiling = ceiling
        self.scopes, self.mode = scope_samples(case)

    @property
    def series(self):
        """The line a point belongs to: the provider, with a planner variant
        other than the automatic one named beside it."""
        if self.variant in (None, "automatic"):
            return self.provider
        return f"{self.provider}/{self.variant}"

    @property
    def shape(self):
        return f"{self.m}x{self.n}"

    def p50_ns(self, scope):
        return statistics.median(self.scopes[scope])


def points(docs, op, view):
    found = []
    for index, doc in enumerate(docs):
        ceiling = ((doc.get("run") or {}).get("copy_ceiling") or {}).get("gbps")
        for case in doc["cases"]:
            if not isinstance(case, dict) or case.get("valid") is not True:
                continue
            p = Point(case, index, ceiling if isinstance(ceiling, (int, float)) else None)
            if (op is None or p.op == op) and (view is None or p.view == view) and p.scopes:
                found.append(p)
    return found


def common_scope(selected, wanted):
    """The scope every selected point has: `wanted`, or with auto the best one."""
    candidates = SCOPES if wanted == "auto" else (wanted,)
    for scope in candidates:
        if all(scope in p.scopes for p in selected):
            return scope
    raise Refusal(f"no scope ({', '.join(candidates)}) that every selected case measured")


def median_by(selected, key, value):
    groups = {}
    for p in selected:
        groups.setdefault(key(p), []).append(value(p))
    return {k: statistics.median(v) for k, v in groups.items()}


# ------------------------------------------------------------ drawing

def pyplot():
    try:
        import matplotlib
    except ImportError:
        print("tilebench_plot: drawing needs matplotlib (Debian: apt-get install "
              "python3-matplotlib)", file=sys.stderr)
        sys.exit(1)
    matplotlib.use("Agg")
    # text stays text in the SVG (searchable, small); ids and the date are
    # fixed so the same results give the same file
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "tilebench",
                                "font.size": 9})
    import matplotlib.pyplot as plt
    return plt


def claim_outputs(out_dir, stem):
    """The SVG and PNG paths, refused when either exists."""
    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, f"{stem}.{ext}") for ext in ("svg", "png")]
    for path in paths:
        if os.path.exists(path):
            raise Refusal(f"{path} exists; nothing written (never overwritten)")
    return paths


def save(fig, paths):
    for path in paths:
        fig.savefig(path, metadata={"Date": None} if path.endswith(".svg") else None,
                    dpi=120, bbox_inches="tight")
    return paths


def sources_line(runs):
    names = [os.path.basename(os.path.normpath(r)) for r in runs]
    text = ", ".join(names) if len(names) <= 4 else f"{len(names)} runs: {names[0]} ... {names[-1]}"
    return f"from {text}"


def draw_sweep(plt, selected, scope, metric, op, runs, paths):
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    modes = sorted({p.mode for p in selected if p.mode}) if scope == "gap_free" else []
    for series in sorted({p.series for p in selected}):
        mine = [p for p in selected if p.series == series and isinstance(p.bytes, (int, float))]
        by_shape = median_by(mine, lambda p: (p.bytes, p.shape), lambda p: p.p50_ns(scope))
        xs = sorted(by_shape)
        ys = [by_shape[x] / 1e3 if metric == "time" else x[0] / by_shape[x] for x in xs]
        line, = ax.plot([x[0] for x in xs], ys, marker="o", markersize=4, label=series)
        line.set_gid(f"series-{series}")  # the SVG group the test counts points in
    ax.set_xscale("log")
    ax.set_yscale("log")
    # each run measured its own ceiling: one value per run, their median drawn
    ceilings = list({p.run_index: p.ceiling for p in selected if p.ceiling}.values())
    if ceilings:
        ceiling = statistics.median(ceilings)
        label = f"device copy ceiling {ceiling:.0f} GB/s" + (
            f" (median of {len(ceilings)} runs)" if len(ceilings) > 1 else "")
        if metric == "time":
            # the least time a call moving b bytes can take at the copy rate
            sizes = [p.bytes for p in selected if isinstance(p.bytes, (int, float))]
            lo, hi = min(sizes) / 1.5, max(sizes) * 1.5
            ax.plot([lo, hi], [lo / ceiling / 1e3, hi / ceiling / 1e3], "k--", linewidth=0.8,
                    label=f"bytes / {label}", gid="copy-ceiling")
            ax.set_xlim(lo, hi)
        else:
            ax.axhline(ceiling, color="k", linestyle="--", linewidth=0.8, label=label,
                       gid="copy-ceiling")
    ax.set_xlabel("minimal bytes per call (inputs read once, output written once)")
    ax.set_ylabel("time per call, p50 (µs)" if metric == "time" else "GB/s (minimal bytes / p50)")
    scope_text = SCOPE_TITLES[scope] + (f", {'/'.join(modes)} batches" if modes else "")
    ax.set_title(f"{op}: {scope_text}\n{sources_line(runs)}", fontsize=9)
    ax.grid(True, which="major", linewidth=0.3)
    ax.legend(fontsize=8)
    save(fig, paths)
    plt.close(fig)


def replay_ratios(docs, op):
    """(label, provider, median, lo, hi) from replay summaries' per-call
    native / framework figures, lo and hi None where there is no interval."""
    found = []
    for doc in docs:
        for case in (doc.get("replay") or {}).get("cases") or []:
            name = case.get("case") if isinstance(case, dict) else None
            if not isinstance(name, str) or (op is not None and name.split("/")[0] != op):
                continue
            for provider, variants in (case.get("native_over_framework") or {}).items():
                for variant, metrics in (variants or {}).items():
                    fig = (metrics or {}).get("per_call") or {}
                    if fig.get("withheld") is not None or not isinstance(
                            fig.get("median"), (int, float)):
                        continue
                    interval = fig.get("interval") or {}
                    label = "/".join(name.split("/")[:2]) + f" {variant} ({fig.get('scope')})"
                    found.append((label, provider, fig["median"], interval.get("lo"),
                                  interval.get("hi")))
    return found


def run_ratios(selected, scope):
    """(label, provider, ratio, None, None) of a native p50 over each other
    provider's p50 of the same op, shape and view in the same run."""
    natives = {(p.run_index, p.op, p.shape, p.view): p for p in selected
               if p.provider == "native" and p.variant in (None, "automatic")}
    found = []
    for p in selected:
        native = natives.get((p.run_index, p.op, p.shape, p.view))
        if p.provider != "native" and native is not None:
            found.append((f"{p.op}/{p.shape}", p.series,
                          native.p50_ns(scope) / p.p50_ns(scope), None, None))
    return found


def label_order(label):
    """By operation, then by element count: "softmax/64x4096 ..." before "softmax/1024x1024"."""
    op, _, rest = label.partition("/")
    dims = rest.split(" ")[0].split("x")
    try:
        size = 1
        for d in dims:
            size *= int(d)
    except ValueError:
        size = 0
    return (op, size, label)


def draw_ratio(plt, ratios, title, runs, paths):
    labels = sorted({r[0] for r in ratios}, key=label_order)
    providers = sorted({r[1] for r in ratios})
    fig, ax = plt.subplots(figsize=(max(6.4, 0.35 * len(labels) + 2), 4.2))
    width = 0.8 / len(providers)
    for k, provider in enumerate(providers):
        mine = [r for r in ratios if r[1] == provider]
        xs = [labels.index(r[0]) + (k - (len(providers) - 1) / 2) * width for r in mine]
        ys = [r[2] for r in mine]
        lower = [r[2] - r[3] if r[3] is not None else 0.0 for r in mine]
        upper = [r[4] - r[2] if r[4] is not None else 0.0 for r in mine]
        bars = ax.errorbar(xs, ys, yerr=[lower, upper], fmt="o", markersize=4, capsize=2,
                           label=f"native / {provider}")
        bars.lines[0].set_gid(f"series-{provider}")
        for collection in bars.lines[2]:  # the interval bars, where there are intervals
            collection.set_gid(f"interval-{provider}")
    ax.axhline(1.0, color="k", linewidth=0.8, gid="parity")
    ax.set_yscale("log")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("native / provider per call (< 1: native faster)")
    ax.set_title(f"{title}\n{sources_line(runs)}", fontsize=9)
    ax.grid(True, axis="y", which="major", linewidth=0.3)
    ax.legend(fontsize=8)
    save(fig, paths)
    plt.close(fig)


# ------------------------------------------------------------ commands

def sweep(args, docs):
    selected = points(docs, args.op, args.view)
    ops = sorted({p.op for p in selected})
    if not ops:
        raise Refusal(f"no valid case of op {args.op or 'any'} in view {args.view or 'any'} "
                      "with a timed scope")
    jobs = []
    for op in ops:
        mine = [p for p in selected if p.op == op]
        scope = common_scope(mine, args.scope)
        jobs.append((op, mine, scope, claim_outputs(args.out, f"sweep-{op}-{args.metric}")))
    plt = pyplot()
    for op, mine, scope, paths in jobs:
        draw_sweep(plt, mine, scope, args.metric, op, args.runs, paths)
        print(f"{paths[0]}, {paths[1]}: {op}, {len(mine)} cases, {SCOPE_TITLES[scope]}")


def ratio(args, docs):
    ratios = replay_ratios(docs, args.op)
    if ratios:
        title = "native / provider per call: replay median and interval"
    else:
        selected = points(docs, args.op, args.view)
        scope = common_scope(selected, args.scope) if selected else None
        ratios = run_ratios(selected, scope) if scope else []
        title = f"native / provider, one run's p50s ({SCOPE_TITLES.get(scope, '')}; no interval)"
    if not ratios:
        raise Refusal("no native case with another provider's case of the same shape to compare")
    paths = claim_outputs(args.out, "ratio")
    draw_ratio(pyplot(), ratios, title, args.runs, paths)
    print(f"{paths[0]}, {paths[1]}: {len(ratios)} ratios")


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"tilebench_plot: {message}", file=sys.stderr)
        sys.exit(2)


def main(argv):
    parser = Parser(prog="tilebench_plot.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name in ("sweep", "ratio"):
        p = sub.add_parser(name)
        p.add_argument("runs", nargs="+", metavar="RUN_DIR")
        p.add_argument("--out", required=True, help="directory for the SVG and PNG (made if absent)")
        p.add_argument("--op", help="only this operation")
        p.add_argument("--view", default="packed", help="input view (default packed)")
        p.add_argument("--scope", default="auto", choices=("auto",) + SCOPES)
        if name == "sweep":
            p.add_argument("--metric", default="time", choices=("time", "gbps"))
    args = parser.parse_args(argv)
    try:
        docs = [load_results(run) for run in args.runs]
        (sweep if args.command == "sweep" else ratio)(args, docs)
    except Refusal as e:
        print(f"tilebench_plot: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
