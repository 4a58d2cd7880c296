#!/usr/bin/env python3
"""One line per case of GPU runs: the graph scope's control and its probe's kernel time a
call, the time between kernels that leaves a kernel (control minus kernel time over the
kernels a call), and whether the "graph gaps" flag was raised (docs/method.md §2.3). Then a
count per provider. Read-only; prints, never judges: the audit and the flags do.

  graph_gaps_summary.py RUN_DIR...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from results_io import load_results  # noqa: E402 (tests/, beside this folder)


def graph_figures(case):
    """(control ns a call, kernel ns a call, kernels a call) of the graph mode, or None."""
    graph = ((case.get("device") or {}).get("throughput") or {}).get("batch_modes", {}).get("graph")
    if not graph or not graph.get("control") or not graph.get("probe"):
        return None
    probe = graph["probe"]
    kernels = probe["kernels"][0] / probe["calls_per_sample"] if probe.get("kernels") else None
    return (graph["control"]["per_call_summary_ns"]["p50"],
            probe["kernel_per_call_summary_ns"]["p50"], kernels)


def line(case):
    figures = graph_figures(case)
    if figures is None:
        return None, False
    control, kernel, kernels = figures
    gap = (control - kernel) / kernels if kernels else None
    flagged = any(f.startswith("graph gaps") for f in (case.get("device") or {}).get("flags", []))
    return (f"{case['id']}: graph {control:.0f} ns a call, kernels {kernel:.0f} "
            f"({kernels:g} a call), between kernels "
            + ("n/a" if gap is None else f"{gap:.0f} ns a kernel")
            + (", graph gaps flagged" if flagged else "")), flagged


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    counts = {}
    for directory in argv:
        try:
            doc = load_results(directory)
        except (OSError, ValueError) as e:
            print(f"graph_gaps_summary: {e}", file=sys.stderr)
            return 2
        cases = doc.get("cases") if isinstance(doc, dict) else None
        if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
            print(f"graph_gaps_summary: {directory}: not a results document (no list of cases)",
                  file=sys.stderr)
            return 2
        for case in cases:
            try:
                text, flagged = line(case)
            except (KeyError, TypeError, IndexError, ValueError, ZeroDivisionError) as e:
                print(f"graph_gaps_summary: {directory}: case {case.get('id')!r} has a malformed "
                      f"graph mode ({type(e).__name__}: {e})", file=sys.stderr)
                return 2
            if text is None:
                continue
            print(text)
            seen, raised = counts.get(case["provider"], (0, 0))
            counts[case["provider"]] = (seen + 1, raised + flagged)
    for provider, (seen, raised) in sorted(counts.items()):
        print(f"graph gaps flagged: {provider} {raised} of {seen}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
