#!/usr/bin/env python3
"""One line per case of GPU runs: eager GPU control against the host phase's end-to-end
time, with the host's own time around the eager batches (schema 9) and the graph control
where measured, a call each, and whether "host drift" was flagged (docs/method.md §2.3,
step 7). Read-only; prints, never judges: the flags and the audit do.

  eager_against_host.py RUN_DIR...
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from results_io import load_results  # noqa: E402 (tests/, beside this folder)


def line(case):
    """The case's line, or None without a device phase."""
    device = case.get("device")
    if not device:
        return None
    t = device["throughput"]
    eager = t["control"]
    text = (f"{case['id']}: eager control {eager['per_call_summary_ns']['p50']:.0f}, "
            f"host {case['host']['throughput']['per_call_summary_ns']['p50']:.0f}")
    around = [h for h in eager.get("host_elapsed_ns", []) if h is not None]
    if around:
        text += f", host around eager {statistics.median(around) / eager['calls_per_sample']:.0f}"
    graph = (t.get("batch_modes") or {}).get("graph") or {}
    if graph.get("control"):
        text += f", graph {graph['control']['per_call_summary_ns']['p50']:.0f}"
    drift = any(f.startswith("host drift") for f in device.get("flags", []))
    return text + " ns/call" + (", host drift flagged" if drift else "")


def summarize(directory):
    """Prints the folder's lines; returns why it cannot, or None."""
    try:
        doc = load_results(directory)
    except (OSError, ValueError) as e:
        return str(e)
    cases = doc.get("cases") if isinstance(doc, dict) else None
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        return f"{directory}: not a results document (no list of cases)"
    for case in cases:
        try:
            text = line(case)
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
            return (f"{directory}: case {case.get('id')!r} has a malformed record "
                    f"({type(e).__name__}: {e})")
        if text is not None:
            print(f"{os.path.basename(os.path.normpath(directory))} {text}")
    return None


def main(argv):
    """Every folder in turn: one that cannot be read is named and the others still
    printed (a GPU call's run that failed leaves no results), then exit 2."""
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    failed = False
    for directory in argv:
        why = summarize(directory)
        if why is not None:
            print(f"eager_against_host: {why}", file=sys.stderr)
            failed = True
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
