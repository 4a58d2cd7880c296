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
- one row of 10^6 (sum, softmax, rmsnorm, layernorm): at most 2x the
  streaming floor of its bytes, `add` moving the same bytes (within 1 %, the
  same view) in the same run.
- gemm against cuBLAS (cuBLAS's time over native's, same realization): at
  least 0.95 at 4096^3 and 8192^3 (simt and TF32), 0.90 at k <= 64 and for
  m = 1 or n = 1, 0.80 everywhere.
- planner regret (tests/gpu/planner_regret.py over the runs that measured
  automatic beside every candidate its plan accepts): median at most 1.05,
  worst 1.15.

A target is met when every case it names was measured, valid and within its
bound, and so is every other case of its class the runs measured. Each case
is judged from the latest run (by its start) that holds it with a
host-gap-free figure; an invalid case in a later run is reported as such,
never hidden by an earlier valid one. A planner regret counts only where every
register candidate the automatic plan's record accepts was measured beside
it. The runs must come from one GPU model; the targets are stated for the
H200, and a run on another card is judged all the same, its device named.

    python3 kernel_targets.py [--json OUT.json] RESULTS_DIR...

Exit 0 when every target is met, 1 when any is missed or not measured, 2 on
bad usage or input.
"""
import json
import math
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

class NoFigure(Exception):
    """A run holds the case but gives it no figure: `invalid` where a case
    failed validation, else it lacks a host-gap-free figure, a floor or a
    ceiling."""

    def __init__(self, why, invalid=False, measured=False):
        super().__init__(why)
        self.invalid, self.measured = invalid, measured


def figure(case):
    """(p50 ns a call, the control's per-call samples) of the case's
    host-gap-free figure; NoFigure where it has none."""
    if not case.get("valid"):
        raise NoFigure(f"{case['id']} is invalid", invalid=True)
    throughput = (case.get("device") or {}).get("throughput") or {}
    chosen = throughput.get("gap_free") or {}
    mode = chosen.get("mode")
    if mode not in GAP_FREE_MODES:
        raise NoFigure(f"{case['id']}: no graph or held figure ({mode or 'none'})")
    control = ((throughput.get("batch_modes") or {}).get(mode) or {}).get("control") or {}
    return chosen["per_call_p50_ns"], control.get("per_call_ns") or []


def positive(value):
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and
            math.isfinite(value) and value > 0)


def need(condition, where, what):
    if not condition:
        raise BadInput(f"{where}: {what}")


def check_timing(throughput, where):
    """The fields of device.throughput this tool and planner_regret.py read."""
    need(isinstance(throughput, dict), where, "device.throughput is not an object")
    chosen = throughput.get("gap_free")
    if chosen is not None:
        need(isinstance(chosen, dict) and isinstance(chosen.get("mode"), str) and
             positive(chosen.get("per_call_p50_ns")), where,
             "device.throughput.gap_free is not {mode, a positive per_call_p50_ns}")
    modes = throughput.get("batch_modes") or {}
    need(isinstance(modes, dict), where, "device.throughput.batch_modes is not an object")
    for mode, record in modes.items():
        need(isinstance(record, dict), where, f"batch_modes.{mode} is not an object")
        control = record.get("control")  # null where the mode was unavailable (its reason given)
        need(control is None or isinstance(control, dict), where,
             f"batch_modes.{mode}.control is not an object")
        if control is None:
            need(not (isinstance(chosen, dict) and chosen.get("mode") == mode), where,
                 f"gap_free names {mode}, whose control is null")
            continue
        samples = control.get("per_call_ns", [])
        need(isinstance(samples, list) and all(positive(v) for v in samples), where,
             f"batch_modes.{mode}.control.per_call_ns is not a list of positive numbers")
        p50 = (control.get("per_call_summary_ns") or {}).get("p50")
        need(p50 is None or positive(p50), where, f"batch_modes.{mode}.control p50 is not positive")


def check_case(case, where):
    need(isinstance(case, dict), where, "not an object")
    for name, kind in (("id", str), ("provider", str), ("op", str), ("m", int), ("n", int),
                       ("input_view", dict), ("valid", bool)):
        need(isinstance(case.get(name), kind) and not (kind is int and isinstance(case[name], bool)),
             where, f"{name} missing or not a {kind.__name__}")
    where = case["id"]
    need(isinstance(case["input_view"].get("kind"), str), where, "input_view.kind is not a string")
    need(positive(case.get("minimal_bytes")), where, "minimal_bytes is not a positive number")
    for name in ("variant", "realization"):
        need(case.get(name) is None or isinstance(case[name], str), where, f"{name} is not a string")
    if case["op"] == "gemm":
        need(isinstance(case.get("k"), int) and isinstance(case.get("realization"), str), where,
             "a gemm case without k or realization")
    plans = case.get("execution_plans") or [{}]
    need(isinstance(plans, list) and isinstance(plans[0], dict), where, "execution_plans is not a list")
    for c in plans[0].get("candidates") or []:
        need(isinstance(c, dict) and isinstance(c.get("subgroups"), int) and
             isinstance(c.get("packing"), int), where, "a plan candidate without subgroups or packing")
    device = case.get("device")
    need(device is None or isinstance(device, dict), where, "device is not an object")
    if device and device.get("throughput") is not None:
        check_timing(device["throughput"], where)


def check_run(doc, folder):
    """Every field this tool reads, of the type it reads it as: BadInput where not."""
    need(isinstance(doc, dict) and isinstance(doc.get("run"), dict) and
         isinstance(doc.get("cases"), list), folder, "not a tilebench results file (no run or cases)")
    run = doc["run"]
    need(run.get("backend") == "cuda", folder, f"not a run on a GPU (backend {run.get('backend')})")
    need(isinstance(run.get("started_at"), str), folder, "run.started_at is not a time")
    ceiling = run.get("copy_ceiling")
    need(ceiling is None or (isinstance(ceiling, dict) and
                             (ceiling.get("gbps") is None or positive(ceiling["gbps"]))),
         folder, "run.copy_ceiling.gbps is not a positive number")
    devices = ((doc.get("provenance") or {}).get("gpu") or {}).get("devices")
    need(isinstance(devices, list) and devices and isinstance(devices[0], dict) and
         isinstance(devices[0].get("name"), str), folder, "provenance.gpu.devices names no GPU")
    for i, case in enumerate(doc["cases"]):
        check_case(case, f"{folder}: case {i}")


class Run:
    def __init__(self, folder):
        self.folder = folder
        try:
            doc = load_results(folder)
        except (OSError, EOFError, ValueError) as e:  # missing, unreadable, truncated, not JSON
            raise BadInput(f"{folder}: {e}") from e
        check_run(doc, folder)
        run = doc["run"]
        self.device = doc["provenance"]["gpu"]["devices"][0]["name"]
        self.started = run["started_at"]
        self.complete = run.get("complete") is True
        self.copy_gbps = (run.get("copy_ceiling") or {}).get("gbps")
        self.cases = doc["cases"]
        artifacts = (doc.get("provenance") or {}).get("artifacts")
        self.build = next((a["sha256"][:12] for a in artifacts or []
                           if isinstance(a, dict) and a.get("role") == "executable" and
                           isinstance(a.get("sha256"), str)), "unknown")

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


# ---- judging ----

def separation(mine, theirs):
    """Whether every sample of one side is below every sample of the other."""
    if mine and theirs and max(mine) < min(theirs):
        return "native faster in every sample"
    if mine and theirs and min(mine) > max(theirs):
        return "native slower in every sample"
    return "samples overlap"


RELATIONS = {"at most": lambda v, b: v <= b, "at least": lambda v, b: v >= b,
             "below": lambda v, b: v < b}


def row(case, value, bound, relation, invalid=False, **facts):
    """One case of a target: its value against the bound ("at most", "at
    least" or "below" it); `invalid` where a case failed validation, value None
    where no run gave the case a figure it can be judged by."""
    if invalid:
        verdict = "invalid"
    elif value is None:
        verdict = "not measured"
    else:
        verdict = "met" if RELATIONS[relation](value, bound) else "missed"
    return dict(case=case, value=value, bound=bound, bound_is=relation, verdict=verdict, **facts)


def latest_first(runs):
    return sorted(runs, key=lambda r: r.started, reverse=True)


def first_judged(runs, label, bound, relation, judge):
    """The row of the latest run for which judge(run) gives (value, facts);
    judge gives None where the run lacks the case. A run whose case gives no
    figure (NoFigure) passes to the one before it, unless a case is invalid:
    that is reported, never hidden behind an older valid run. A row left
    unjudged says why, and whether a run did measure the case (`measured`:
    it lacked only what the case is judged against)."""
    why, measured = None, False
    for run in latest_first(runs):
        try:
            judged = judge(run)
        except NoFigure as e:
            if e.invalid:
                return row(label, None, bound, relation, invalid=True, run=run.folder,
                           detail=str(e))
            why, measured = why or str(e), measured or e.measured
            continue
        if judged is not None:
            value, facts = judged
            return row(label, value, bound, relation, run=run.folder, **facts)
    return row(label, None, bound, relation, measured=measured, **({"detail": why} if why else {}))


def shape_name(shape):
    return "x".join(str(d) for d in shape)


def refuse_invalid(*cases):
    for case in cases:
        if case is not None and not case["valid"]:
            raise NoFigure(f"{case['id']} is invalid", invalid=True)


def native_case(run, op, shape):
    """The run's packed native case of op and shape (its automatic plan), or
    None; NoFigure where it is invalid."""
    case = run.find("native", op, shape)
    refuse_invalid(case)
    return case


def ratio_row(runs, label, op, shape, other, bound, relation="at most", realization=None,
              invert=False):
    """A row of native's time over other's (other's over native's with
    invert: a speed fraction), both from one run."""
    def judge(run):
        native = run.find("native", op, shape, realization=realization)
        theirs = run.find(other, op, shape, realization=realization)
        refuse_invalid(native, theirs)  # a later invalid case, with its pair or not
        if native is None or theirs is None:
            return None
        a, b = figure(native), figure(theirs)
        facts = dict(native_ns=a[0], other_ns=b[0])
        ceiling = ""
        if run.copy_gbps and op != "gemm":
            # how near the other side already runs to the run's copy ceiling: a bound
            # that asks native to stream faster than that is named by it
            facts["other_of_copy_ceiling"] = native["minimal_bytes"] / b[0] / run.copy_gbps
            ceiling = f" ({facts['other_of_copy_ceiling']:.2f} of the copy ceiling)"
        facts["detail"] = (f"native {a[0] / 1e3:.3f} µs, {other} {b[0] / 1e3:.3f} µs{ceiling}; "
                           f"{separation(a[1], b[1])}")
        return (b[0] / a[0] if invert else a[0] / b[0]), facts
    return first_judged(runs, label, bound, relation, judge)


def compile_target(runs):
    rows = []
    for m, n in EVIDENCE_SHAPES:
        for op in EVIDENCE_OPS:
            bound = 0.95 if (m, n) in LARGE_SHAPES else 1.00
            rows.append(ratio_row(runs, f"{op}/{m}x{n}", op, (m, n), "torch-compile", bound))
    return target("native / torch.compile a call", rows)


def copy_fraction_row(runs, op, shape, bound):
    def judge(run):
        case = native_case(run, op, shape)
        if case is None:
            return None
        p50 = figure(case)[0]
        if not run.copy_gbps:
            raise NoFigure("no copy ceiling in its run", measured=True)
        gbps = case["minimal_bytes"] / p50
        return gbps / run.copy_gbps, dict(native_ns=p50, gbps=gbps, copy_gbps=run.copy_gbps,
                                          detail=f"{p50 / 1e3:.3f} µs, {gbps:.0f} of "
                                                 f"{run.copy_gbps:.0f} GB/s")
    return first_judged(runs, f"{op}/{shape_name(shape)}", bound, "at least", judge)


def others(runs, named, rule):
    """The (op, m, n), not in named, of the packed native row cases any run
    holds whose shape fits rule."""
    found = dict.fromkeys((c["op"], c["m"], c["n"]) for run in runs for c in run.cases
                          if c["provider"] == "native" and c["op"] in ROW_OPS and
                          c["input_view"]["kind"] == "packed" and rule(c["m"], c["n"]))
    return [key for key in found if key not in named]


def class_target(name, runs, named, rule, bound):
    def rows(cases):
        return [copy_fraction_row(runs, op, (m, n), bound) for op, m, n in cases]
    return target(name, rows(named), rows(others(runs, named, rule)))


def short_rows_target(runs):
    def rows(cases):  # faster, not as fast: below 1
        return [ratio_row(runs, f"{op}/{m}x{n} vs {other}", op, (m, n), other, 1.00, "below")
                for op, m, n in cases for other in ("torch", "torch-compile")]
    named = [("softmax", 65536, 17)]
    return target("very short rows: native / torch (eager, compile) a call", rows(named),
                  rows(others(runs, named, lambda m, n: n <= 32 and m >= 65536)))


def floor_of(run, case):
    """The add of the run that moves the case's bytes (within 1 %, the same
    view, the closest; a valid one where any is)."""
    near = [c for c in run.cases if c["op"] == "add" and c["provider"] == "native" and
            c["input_view"]["kind"] == case["input_view"]["kind"] and
            abs(c["minimal_bytes"] - case["minimal_bytes"]) <= 0.01 * case["minimal_bytes"]]
    if not near:
        raise NoFigure(f"no add of {case['minimal_bytes']:.0f} bytes in its run", measured=True)
    return min(near, key=lambda c: (not c["valid"], abs(c["minimal_bytes"] - case["minimal_bytes"])))


def floor_row(runs, op, shape, bound=2.0):
    def judge(run):
        case = native_case(run, op, shape)
        if case is None:
            return None
        floor_case = floor_of(run, case)
        mine, floor = figure(case)[0], figure(floor_case)[0]
        return mine / floor, dict(native_ns=mine, floor_ns=floor, floor_case=floor_case["id"],
                                  detail=f"native {mine / 1e3:.3f} µs, {floor_case['id']} "
                                         f"{floor / 1e3:.3f} µs")
    return first_judged(runs, f"{op}/{shape_name(shape)}", bound, "at most", judge)


def one_row_target(runs):
    return target("one row of 10^6: native / streaming floor of its bytes",
                  [floor_row(runs, op, (1, 1000000)) for op in ROW_OPS])


def gemm_bound(shape, realization):
    """The issue's bound on cuBLAS's time over native's at a gemm shape."""
    m, n, k = shape
    if shape in GEMM_BIG and realization in ("simt", "tensor"):
        return 0.95
    return 0.90 if k <= 64 or m == 1 or n == 1 else 0.80


def gemm_target(runs):
    named = dict.fromkeys([(s, r) for s in GEMM_BIG + GEMM_SMALL_K + GEMM_MATRIX
                           for r in ("simt", "tensor")] + [(s, "simt") for s in GEMM_VECTOR])
    measured = dict.fromkeys(
        ((c["m"], c["n"], c["k"]), c["realization"]) for run in runs for c in run.cases
        if c["op"] == "gemm" and c["provider"] == "native" and c["input_view"]["kind"] == "packed")

    def rows(cases):
        return [ratio_row(runs, f"gemm/{shape_name(s)}/{r}", "gemm", s, "cublas", gemm_bound(s, r),
                          "at least", realization=r, invert=True) for s, r in cases]
    return target("gemm: cuBLAS time / native time", rows(named),
                  rows(key for key in measured if key not in named))


def subgroups_packing(variant):
    """(s, p) of a fixed variant's name (`sSpP`, reference, candidate)."""
    named = {"reference": (1, 8), "candidate": (2, 4)}
    if variant in named:
        return named[variant]
    if variant.startswith("s") and "p" in variant:
        s, _, p = variant[1:].partition("p")
        if s.isdigit() and p.isdigit():
            return int(s), int(p)
    return None


def accepted_candidates(case):
    """(s, p) of every register candidate the automatic plan's record accepts:
    the fixed variants a regret must measure to say the automatic plan is
    within reach of the best the planner could have picked."""
    plan = (case.get("execution_plans") or [{}])[0]
    return {(c["subgroups"], c["packing"]) for c in plan.get("candidates") or []
            if not c.get("rejected")}


def regret_row(runs, op, m, n):
    """The automatic plan's time over the fastest fixed candidate's at op, m x n
    (packed), from the latest run that measured both, every variant in the
    scope of the automatic case's host-gap-free figure (planner_regret.py's
    figures; one run's cases only, so candidates of other builds never mix).
    An invalid variant makes the row invalid: it is a kernel the planner may
    pick that computes wrongly."""
    def judge(run):
        variants = {c["variant"]: c for c in run.cases
                    if (c["provider"], c["op"], c["m"], c["n"], c["input_view"]["kind"]) ==
                    ("native", op, m, n, "packed") and c.get("variant")}
        refuse_invalid(*variants.values())
        if "automatic" not in variants or len(variants) < 2:
            return None
        figure(variants["automatic"])  # NoFigure: no graph or held figure
        scope = variants["automatic"]["device"]["throughput"]["gap_free"]["mode"]
        lacking = [v for v, c in variants.items() if planner_regret.figure(c, scope) is None]
        if lacking:
            raise NoFigure(f"no {scope} figure for {', '.join(sorted(lacking))}")
        missing = accepted_candidates(variants["automatic"]) - set(map(subgroups_packing, variants))
        if missing:
            # not a regret run (a few fixed variants beside automatic): no regret measured
            raise NoFigure(f"{len(missing)} candidate(s) the planner accepts not measured, e.g. "
                           + "s{}p{}".format(*sorted(missing)[0]))
        r = planner_regret.regrets({(op, m, n, "packed"): variants}, scope)[0]
        return r["regret"], dict(best_fixed=r["best_fixed"],
                                 detail=f"automatic {r['automatic_ns'] / 1e3:.3f} µs, best of "
                                        f"{r['candidates']} fixed {r['best_fixed']} "
                                        f"{r['best_fixed_ns'] / 1e3:.3f} µs ({scope})")
    return first_judged(runs, f"{op}/{m}x{n}", planner_regret.WORST_TARGET, "at most", judge)


def regret_target(runs):
    named = [(op, m, n) for m, n in EVIDENCE_SHAPES for op in ROW_OPS]
    measured = dict.fromkeys(
        (c["op"], c["m"], c["n"]) for run in runs for c in run.cases
        if c["provider"] == "native" and c.get("variant") not in (None, "automatic") and
        c["input_view"]["kind"] == "packed" and (c["op"], c["m"], c["n"]) not in named)
    result = target("planner regret: automatic / best fixed candidate",
                    [regret_row(runs, *key) for key in named],
                    [regret_row(runs, *key) for key in measured])
    values = [r["value"] for r in result["rows"] if r["value"] is not None]
    if values:
        result["median"] = statistics.median(values)
        if result["median"] > planner_regret.MEDIAN_TARGET and result["verdict"] == "met":
            result["verdict"] = "missed"
    return result


def target(name, rows, other_rows=()):
    """The verdict over `rows` (the cases the target names: each must be met)
    and the other cases of its class the runs hold (`other_rows`: those no run
    measured host-gap-free are left out; the rest count as the named ones do,
    so one measured but not judged, lacking its floor or ceiling, counts as
    not measured)."""
    rows = list(rows) + [r for r in other_rows if r["verdict"] != "not measured" or r["measured"]]
    counts = {v: sum(r["verdict"] == v for r in rows)
              for v in ("met", "missed", "invalid", "not measured")}
    verdict = ("missed" if counts["missed"] or counts["invalid"] else
               "not measured" if counts["not measured"] else "met")
    return dict(name=name, verdict=verdict, counts=counts, rows=rows)


# ---- output ----

def print_target(t, numbers):
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
        where = f"run {numbers[r['run']]}: " if r.get("run") in numbers else ""
        print(f"| {r['case']} | {value} | {r['bound_is']} {r['bound']:g} | {r['verdict']} | "
              f"{where}{r.get('detail', '')} |")
    missing = [r["case"] + (f" ({r['detail']})" if r.get("detail") else "") for r in t["rows"]
               if r["verdict"] == "not measured"]
    if missing:
        print(("\n" if measured else "") + f"not measured: {', '.join(missing)}")


USAGE = "usage: kernel_targets.py [--json OUT.json] RESULTS_DIR..."


def read_runs(folders):
    """The runs of the folders, each once, all of one GPU model; BadInput where not."""
    seen = {}
    for folder in folders:
        real = os.path.realpath(folder)
        if real in seen:
            raise BadInput(f"{folder}: given twice (as {seen[real]})")
        seen[real] = folder
    runs = [Run(folder) for folder in folders]
    devices = sorted({r.device for r in runs})
    if len(devices) > 1:
        raise BadInput("runs from different GPUs (" + ", ".join(devices) + "): judge each "
                       "card's runs apart")
    return runs


def judge_all(runs):
    return [
        compile_target(runs),
        class_target("many long rows: fraction of the copy ceiling", runs,
                     [("softmax", 4096, 393216)], lambda m, n: m >= 1024 and n >= 131072, 0.90),
        class_target("few very long rows: fraction of the copy ceiling", runs,
                     [("layernorm", 16, 4194304)], lambda m, n: 2 <= m <= 64 and n >= 1000000,
                     0.80),
        short_rows_target(runs),
        one_row_target(runs),
        gemm_target(runs),
        regret_target(runs),
    ]


def print_report(runs, targets):
    print(f"# Issue 21 targets on {runs[0].device} ({len(runs)} run(s))\n")
    numbers = {}
    for run in runs:
        numbers[run.folder] = len(numbers) + 1
        print(f"{numbers[run.folder]}. {run.folder} (started {run.started}, tilebench "
              f"{run.build}{'' if run.complete else '; incomplete: its finished cases only'})")
    builds = {run.build for run in runs}
    if len(builds) > 1:
        print(f"\nThese runs come from {len(builds)} builds of tilebench: each case is judged from "
              "the latest run that holds it, whichever build that is.")
    for t in targets:
        print_target(t, numbers)
    print()
    for t in targets:
        print(f"{t['verdict'].upper():12s} {t['name']}")


def main(argv):
    args, out = argv[1:], None
    if args[:1] == ["--json"]:
        if len(args) < 2:
            print(f"--json needs a file\n{USAGE}", file=sys.stderr)
            return 2
        out, args = args[1], args[2:]
    if not args:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        runs = read_runs(args)
        report = open(out, "w") if out else None  # a place it cannot write fails before judging
    except (BadInput, OSError) as e:
        print(f"kernel_targets: {e}", file=sys.stderr)
        return 2
    targets = judge_all(runs)
    print_report(runs, targets)
    if report:
        with report:
            json.dump({"device": runs[0].device, "runs": [r.folder for r in runs],
                       "targets": targets}, report, indent=2)
    return 0 if all(t["verdict"] == "met" for t in targets) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
