#!/usr/bin/env python3
"""One line per case of a GPU run: how each phase's sampling stopped (the noise
rule of docs/method.md §2.6) and what the per-sample clock checks of §2.7 read
(SM clock range over the kept samples' reads, discarded samples, kept-throttled
samples, the warm-up). Read-only; prints, never judges: the audit does.

  clock_checks_summary.py RUN_DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from results_io import load_results  # noqa: E402 (tests/, beside this folder)


def num(x):
    return "n/a" if x is None else f"{x:.4f}"


def clock_text(checks):
    if not checks.get("checked"):
        return f"unchecked ({checks.get('why_unchecked')})"
    reads = checks["sm_clock_before_mhz"] + checks["sm_clock_after_mhz"]
    kept = sum(1 for k in checks["kept_throttled"] if k)
    return (f"SM {min(reads)}-{max(reads)} MHz (ref {checks['reference_sm_clock_mhz']}), "
            f"{len(checks['discarded'])} discarded, {kept} kept throttled")


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        doc = load_results(argv[0])
    except (OSError, ValueError) as e:
        print(f"clock_checks_summary: {e}", file=sys.stderr)
        return 2
    if doc.get("schema_version", 0) < 7:
        print("clock_checks_summary: needs a schema 7 results file", file=sys.stderr)
        return 2
    for case in doc["cases"]:
        host, device = case.get("host") or {}, case.get("device") or {}
        hs = host.get("stopping") or {}
        ds = (device.get("throughput") or {}).get("stopping") or {}
        warm = device.get("clock_warmup") or {}
        print(f"{case['id']}: host {hs.get('samples_taken')} samples ({hs.get('reason')}, "
              f"noise {num(hs.get('noise'))}); device {ds.get('samples_taken')} "
              f"({ds.get('reason')}, noise {num(ds.get('noise'))}); warm-up "
              f"{warm.get('reads')} reads, steady {warm.get('steady')}; throughput "
              f"{clock_text(device.get('throughput', {}).get('clock_checks', {}))}; latency "
              f"{clock_text(device.get('latency', {}).get('clock_checks', {}))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
