"""Issue 21's targets, judged from the runs given: each target's cases, each
with its figure, bound and verdict, and the target's verdict over them.

Every figure is a case's host-gap-free GPU control (`device.throughput.
gap_free`, graph or held replays; an eager figure is refused, since at
microsecond scale it holds host launch gaps), and every ratio pairs two cases
of one run, so both sides ran in the same call on the same inputs:

- compile: native over torch.compile per call, every op and shape of the
  evidence matrix, packed rows; at most 1.00, 0.95 at 32768x8192 and
  8192x32768.
- many long rows (m >= 1024, n >= 131072) at least 0.90 of the run's copy
  ceiling; few very long rows (2 <= m <= 64, n >= 10^6) at least 0.80.
- very short rows (n <= 32, m >= 65536): native faster than torch eager and
  torch.compile.
- one row of 10^6 or more: at most 2x the streaming floor of its bytes, `add`
  moving the same bytes (within 1 %) in the same run.
- gemm against cuBLAS (cuBLAS's time over native's, same realization): at
  least 0.95 at 4096^3 and 8192^3 (simt and TF32), 0.90 at k <= 64 and for
  m = 1 or n = 1, 0.80 everywhere.
- planner regret (tests/gpu/planner_regret.py over the runs that measured
  automatic beside fixed variants): median at most 1.05, worst 1.15.

A target is met when every case it names was measured, valid, and within its
bound, and so is every other case of its class the runs hold. The runs must
come from one GPU model; the targets are stated for the H200, and a run on
another card is judged all the same, its device named in the output.

    python3 kernel_targets.py [--json OUT.json] RESULTS_DIR...

Exit 0 when every target is met, 1 when any is missed or not measured, 2 on
bad usage or input.
"""
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from results_io import load_results  # noqa: E402 (tests/, beside this folder)
import planner_regret  # noqa: E402 (this folder)

EVIDENCE_SHAPES = [(17, 257), (37, 769), (64, 4096), (1024, 1024), (16384, 257), (4096, 1024),
                   (32768, 8192), (8192, 32768), (262144, 257), (8, 65536)]
LARGE_SHAPES = {(32768, 8192), (8192, 32768)}
ROW_OPS = ("sum", "softmax", "rmsnorm", "layernorm")
EVIDENCE_OPS = ROW_OPS + ("add", "gelu_add")
GEMM_BIG = [(4096, 4096, 4096), (8192, 8192, 8192)]
GEMM_SMALL_K = [(4096, 4096, 13)]
GEMM_VECTOR = [(1, 4096, 4096), (4096, 1, 4096)]
GEMM_MATRIX = [(32, 32, 32), (128, 128, 128), (127, 193, 61), (1024, 1024, 1024),
               (1999, 2999, 37), (2048, 1536, 512), (4096, 4096, 4096)]
GAP_FREE_MODES = ("graph", "held")


class BadInput(Exception):
    pass


# ---- reading the runs ----

def gap_free(case):
    """(p50 ns a call, the control's per-call samples) of a valid case's
    host-gap-free figure, or None where it has none."""
    if not case.get("valid"):
        return None
    throughput = (case.get("device") or {}).get("throughput") or {}
    chosen = throughput.get("gap_free") or {}
    mode = chosen.get("mode")
    if mode not in GAP_FREE_MODES:
        return None
    control = ((throughput.get("batch_modes") or {}).get(mode) or {}).get("control") or {}
    return chosen["per_call_p50_ns"], control.get("per_call_ns") or []


def device_of(doc, where):
    devices = ((doc.get("provenance") or {}).get("gpu") or {}).get("devices") or []
    if doc.get("run", {}).get("backend") != "cuda" or not devices:
        raise BadInput(f"{where}: not a run on a GPU (backend {doc.get('run', {}).get('backend')})")
    return devices[0]["name"]


CASE_FIELDS = ("id", "provider", "op", "m", "n", "input_view", "valid", "minimal_bytes")


class Run:
    def __init__(self, folder):
        self.folder = folder
        try:
            doc = load_results(folder)
        except (FileNotFoundError, ValueError) as e:
            raise BadInput(str(e)) from e
        if not isinstance(doc, dict) or not isinstance(doc.get("run"), dict) or \
                not isinstance(doc.get("cases"), list):
            raise BadInput(f"{folder}: not a tilebench results file (no run record or cases)")
        self.device = device_of(doc, folder)
        self.started = doc["run"].get("started_at") or ""
        ceiling = doc["run"].get("copy_ceiling") or {}
        self.copy_gbps = ceiling.get("gbps")
        for i, case in enumerate(doc["cases"]):
            missing = [k for k in CASE_FIELDS if not isinstance(case, dict) or k not in case]
            if missing or not isinstance(case["input_view"], dict):
                raise BadInput(f"{folder}: case {i} lacks {', '.join(missing) or 'input_view.kind'}")
        self.cases = doc["cases"]

    def find(self, provider, op, shape, view="packed", realization=None):
        """The run's case of provider, op and shape ((m, n) or (m, n, k)) on the
        view, native's automatic plan, or None."""
        for c in self.cases:
            if (c["provider"], c["op"], c["input_view"]["kind"]) != (provider, op, view):
                continue
            if (c["m"], c["n"]) + ((c.get("k"),) if len(shape) == 3 else ()) != shape:
                continue
            if realization is not None and c.get("realization") != realization:
                continue
            if provider == "native" and c.get("variant") not in (None, "automatic"):
                continue
            return c
        return None


def pairs(runs, op, shape, other, view="packed", realization=None):
    """(run, native case, other case) of each run holding both, latest first."""
    found = []
    for run in sorted(runs, key=lambda r: r.started, reverse=True):
        native = run.find("native", op, shape, view, realization)
        theirs = run.find(other, op, shape, view, realization)
        if native is not None and theirs is not None:
            found.append((run, native, theirs))
    return found


# ---- judging ----

def separation(mine, theirs):
    """Whether every sample of one side is below every sample of the other."""
    if mine and theirs and max(mine) < min(theirs):
        return "native faster in every sample"
    if mine and theirs and min(mine) > max(theirs):
        return "native slower in every sample"
    return "samples overlap"


def row(case, value, bound, at_most, invalid=False, **facts):
    """One case of a target: its value against the bound; `invalid` where a
    case was found but gives no figure, value None where none was found."""
    if invalid:
        verdict = "invalid"
    elif value is None:
        verdict = "not measured"
    else:
        verdict = "met" if (value <= bound if at_most else value >= bound) else "missed"
    return dict(case=case, value=value, bound=bound, bound_is="at most" if at_most else "at least",
                verdict=verdict, **facts)


def shape_name(shape):
    return "x".join(str(d) for d in shape)


def ratio_row(runs, label, op, shape, other, bound, at_most=True, realization=None, invert=False):
    """A row of native's time over other's (other's over native's with
    invert: a speed fraction) from the latest run holding both."""
    found = pairs(runs, op, shape, other, realization=realization)
    if not found:
        return row(label, None, bound, at_most)
    run, native, theirs = found[0]
    a, b = gap_free(native), gap_free(theirs)
    if a is None or b is None:
        return row(label, None, bound, at_most, invalid=True, run=run.folder,
                   detail="a case is invalid or has no graph or held figure")
    value = b[0] / a[0] if invert else a[0] / b[0]
    return row(label, value, bound, at_most, run=run.folder, native_ns=a[0], other_ns=b[0],
               detail=f"native {a[0] / 1e3:.3f} µs, {other} {b[0] / 1e3:.3f} µs; "
                      f"{separation(a[1], b[1])}")


def compile_target(runs):
    rows = []
    for m, n in EVIDENCE_SHAPES:
        for op in EVIDENCE_OPS:
            bound = 0.95 if (m, n) in LARGE_SHAPES else 1.00
            rows.append(ratio_row(runs, f"{op}/{m}x{n}", op, (m, n), "torch-compile", bound))
    return target("native / torch.compile a call", rows)


def in_class(runs, rule):
    """{(op, m, n): None} of the packed native row cases any run holds whose shape fits rule."""
    return {(c["op"], c["m"], c["n"]): None for run in runs for c in run.cases
            if c["provider"] == "native" and c["op"] in ROW_OPS and c["input_view"]["kind"] ==
            "packed" and rule(c["m"], c["n"])}


def copy_fraction_row(runs, op, shape, bound):
    for run in sorted(runs, key=lambda r: r.started, reverse=True):
        case = run.find("native", op, shape)
        if case is None:
            continue
        figure = gap_free(case)
        if figure is None or not run.copy_gbps:
            return row(f"{op}/{shape_name(shape)}", None, bound, False, invalid=True,
                       run=run.folder,
                       detail="invalid, no graph or held figure, or no copy ceiling")
        gbps = case["minimal_bytes"] / figure[0]
        return row(f"{op}/{shape_name(shape)}", gbps / run.copy_gbps, bound, False,
                   run=run.folder, native_ns=figure[0], gbps=gbps, copy_gbps=run.copy_gbps,
                   detail=f"{figure[0] / 1e3:.3f} µs, {gbps:.0f} of {run.copy_gbps:.0f} GB/s")
    return row(f"{op}/{shape_name(shape)}", None, bound, False)


def class_target(name, runs, named, rule, bound):
    cases = dict.fromkeys(named)
    cases.update(in_class(runs, rule))
    rows = [copy_fraction_row(runs, op, (m, n), bound) for op, m, n in cases]
    return target(name, rows)


def short_rows_target(runs):
    cases = dict.fromkeys([("softmax", 65536, 17)])
    cases.update(in_class(runs, lambda m, n: n <= 32 and m >= 65536))
    rows = []
    for op, m, n in cases:
        for other in ("torch", "torch-compile"):
            rows.append(ratio_row(runs, f"{op}/{m}x{n} vs {other}", op, (m, n), other, 1.00))
    # faster, not as fast: a ratio of exactly 1 is not met
    for r in rows:
        if r["value"] is not None and r["value"] >= 1.0 and r["verdict"] == "met":
            r["verdict"] = "missed"
    return target("very short rows: native / torch (eager, compile) a call", rows)


def floor_row(runs, op, shape, bound=2.0):
    label = f"{op}/{shape_name(shape)}"
    for run in sorted(runs, key=lambda r: r.started, reverse=True):
        case = run.find("native", op, shape)
        if case is None:
            continue
        floors = [c for c in run.cases if c["op"] == "add" and c["provider"] == "native" and
                  abs(c["minimal_bytes"] - case["minimal_bytes"]) <= 0.01 * case["minimal_bytes"]]
        if not floors:
            return row(label, None, bound, True, run=run.folder,
                       detail=f"no add of {case['minimal_bytes']:.0f} bytes in its run")
        mine, floor = gap_free(case), gap_free(floors[0])
        if mine is None or floor is None:
            return row(label, None, bound, True, invalid=True, run=run.folder,
                       detail="a case is invalid or has no graph or held figure")
        return row(label, mine[0] / floor[0], bound, True, run=run.folder, native_ns=mine[0],
                   floor_ns=floor[0], floor_case=floors[0]["id"],
                   detail=f"native {mine[0] / 1e3:.3f} µs, {floors[0]['id']} {floor[0] / 1e3:.3f} µs")
    return row(label, None, bound, True)


def one_row_target(runs):
    cases = dict.fromkeys((op, 1, 1000000) for op in ("softmax", "rmsnorm", "layernorm"))
    cases.update(in_class(runs, lambda m, n: m == 1 and n >= 1000000))
    return target("one row of 10^6: native / streaming floor of its bytes",
                  [floor_row(runs, op, (m, n)) for op, m, n in cases])


def gemm_target(runs):
    named = {}
    for shape in GEMM_BIG:
        for realization in ("simt", "tensor"):
            named[(shape, realization)] = 0.95
    for shape in GEMM_SMALL_K:
        for realization in ("simt", "tensor"):
            named[(shape, realization)] = 0.90
    for shape in GEMM_VECTOR:
        named[(shape, "simt")] = 0.90
    for shape in GEMM_MATRIX:
        for realization in ("simt", "tensor"):
            named.setdefault((shape, realization), 0.80)
    for run in runs:
        for c in run.cases:
            if c["op"] == "gemm" and c["provider"] == "native" and c["input_view"]["kind"] == "packed":
                shape = (c["m"], c["n"], c["k"])
                small = c["k"] <= 64 or c["m"] == 1 or c["n"] == 1
                named.setdefault((shape, c["realization"]), 0.90 if small else 0.80)
    rows = [ratio_row(runs, f"gemm/{shape_name(s)}/{realization}", "gemm", s, "cublas", bound,
                      at_most=False, realization=realization, invert=True)
            for (s, realization), bound in named.items()]
    return target("gemm: cuBLAS time / native time", rows)


def regret_target(runs, docs):
    groups = planner_regret.groups_of(docs)
    named = {(op, m, n, "packed") for m, n in EVIDENCE_SHAPES for op in ROW_OPS}
    scope = planner_regret.common_scope(groups)
    measured = {} if scope not in GAP_FREE_MODES else {
        r["case"]: r for r in planner_regret.regrets(groups, scope)}
    rows = []
    for op, m, n, view in sorted(named | {k for k, v in groups.items() if len(v) > 1}):
        r = measured.get(f"{op}/{m}x{n}/{view}")
        facts = {} if r is None else dict(
            best_fixed=r["best_fixed"], detail=f"automatic {r['automatic_ns'] / 1e3:.3f} µs, "
                                               f"best fixed {r['best_fixed']} "
                                               f"{r['best_fixed_ns'] / 1e3:.3f} µs")
        rows.append(row(f"{op}/{m}x{n}/{view}", r and r["regret"], planner_regret.WORST_TARGET,
                        True, **facts))
    values = [r["value"] for r in rows if r["value"] is not None]
    result = target("planner regret: automatic / best fixed candidate", rows)
    if values:
        median = statistics.median(values)
        result["median"] = median
        if median > planner_regret.MEDIAN_TARGET and result["verdict"] == "met":
            result["verdict"] = "missed"
    return result


def target(name, rows):
    counts = {v: sum(r["verdict"] == v for r in rows)
              for v in ("met", "missed", "invalid", "not measured")}
    verdict = ("missed" if counts["missed"] or counts["invalid"] else
               "not measured" if counts["not measured"] else "met")
    return dict(name=name, verdict=verdict, counts=counts, rows=rows)


# ---- output ----

def print_target(t):
    c = t["counts"]
    extra = f", median {t['median']:.3f}" if "median" in t else ""
    print(f"\n## {t['name']}: {t['verdict'].upper()} ({c['met']} met, {c['missed']} missed, "
          f"{c['invalid']} invalid, {c['not measured']} not measured{extra})\n")
    measured = [r for r in t["rows"] if r["verdict"] != "not measured"]
    if measured:
        print("| case | value | bound | verdict | detail |")
        print("|---|---:|---|---|---|")
    for r in measured:
        value = "" if r["value"] is None else f"{r['value']:.3f}"
        print(f"| {r['case']} | {value} | {r['bound_is']} {r['bound']:g} | {r['verdict']} | "
              f"{r.get('detail', '')} |")
    missing = [r["case"] + (f" ({r['detail']})" if r.get("detail") else "") for r in t["rows"]
               if r["verdict"] == "not measured"]
    if missing:
        print(("\n" if measured else "") + f"not measured: {', '.join(missing)}")


def main(argv):
    args, out = argv[1:], None
    if args[:1] == ["--json"]:
        if len(args) < 2:
            print("--json needs a file", file=sys.stderr)
            return 2
        out, args = args[1], args[2:]
    if not args:
        print(__doc__.strip().splitlines()[-3].strip(), file=sys.stderr)
        return 2
    try:
        runs = [Run(folder) for folder in args]
        devices = sorted({r.device for r in runs})
        if len(devices) > 1:
            raise BadInput("runs from different GPUs (" + ", ".join(devices) + "): judge each "
                           "card's runs apart")
    except BadInput as e:
        print(f"kernel_targets: {e}", file=sys.stderr)
        return 2
    docs = [{"cases": r.cases} for r in runs]
    targets = [
        compile_target(runs),
        class_target("many long rows: fraction of the copy ceiling", runs,
                     [("softmax", 4096, 393216)], lambda m, n: m >= 1024 and n >= 131072, 0.90),
        class_target("few very long rows: fraction of the copy ceiling", runs,
                     [("layernorm", 16, 4194304)], lambda m, n: 2 <= m <= 64 and n >= 1000000,
                     0.80),
        short_rows_target(runs),
        one_row_target(runs),
        gemm_target(runs),
        regret_target(runs, docs),
    ]
    print(f"# Issue 21 targets on {devices[0]} ({len(runs)} run(s))")
    for t in targets:
        print_target(t)
    print()
    for t in targets:
        print(f"{t['verdict'].upper():12s} {t['name']}")
    if out:
        with open(out, "w") as f:
            json.dump({"device": devices[0], "runs": [r.folder for r in runs], "targets": targets},
                      f, indent=2)
    return 0 if all(t["verdict"] == "met" for t in targets) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
