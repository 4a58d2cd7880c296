#!/usr/bin/env python3
"""Independent audit of tilebench results (METHOD.md §6).

Re-derives every published figure from the raw samples and the case alone,
with code of its own (it shares nothing with the C statistics or planner):
sample counts and per-call values, p50/min/max, paired probe/control ratios,
order alternation, validity, every planner fact and pick, generated sources'
hashes and properties, replay balance, gains, verdicts and counts, and the
identity of the environments of the runs it is given. Stops at the first
discrepancy with a message naming the file, case and field.

usage: tilebench_audit.py DIR... [--receipt FILE] [--check-current-artifacts]
exit: 0 all checks passed; 1 a discrepancy; 2 bad usage or input.
"""
import argparse
import gzip
import hashlib
import json
import math
import os
import sys

AUDIT_VERSION = "1"


class Discrepancy(Exception):
    pass


class Audit:
    def __init__(self):
        self.checks = 0
        self.where = ""

    def fail(self, field, message):
        raise Discrepancy(f"{self.where}: {field}: {message}")

    def same(self, field, recorded, expected, rel=1e-9):
        """Recorded value must equal the re-derived one (numbers within rel)."""
        self.checks += 1
        if isinstance(expected, float) or isinstance(recorded, float):
            if recorded is None or expected is None:
                if recorded is expected:
                    return
                self.fail(field, f"recorded {recorded!r}, re-derived {expected!r}")
            if math.isnan(expected) and recorded is None:
                return
            if not math.isclose(recorded, expected, rel_tol=rel, abs_tol=1e-12):
                self.fail(field, f"recorded {recorded!r}, re-derived {expected!r}")
            return
        if recorded != expected:
            self.fail(field, f"recorded {recorded!r}, re-derived {expected!r}")


def median(values):
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return None
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


# ---- samples ---------------------------------------------------------------

def audit_phase(a, phase, name, samples, check_count=True):
    elapsed = phase["elapsed_ns"]
    per_call = phase["per_call_ns"]
    calls = phase["calls_per_sample"]
    if check_count:
        a.same(f"{name}.elapsed_ns (count)", len(elapsed), samples)
    a.same(f"{name}.per_call_ns (count)", len(per_call), len(elapsed))
    if not isinstance(calls, int) or calls < 1:
        a.fail(f"{name}.calls_per_sample", f"{calls!r} is not a positive whole number")
    for i, (e, p) in enumerate(zip(elapsed, per_call)):
        a.same(f"{name}.per_call_ns[{i}]", p, e / calls)
    summary = phase["per_call_summary_ns"]
    if per_call:
        a.same(f"{name}.per_call_summary_ns.p50", summary["p50"], median(per_call))
        a.same(f"{name}.per_call_summary_ns.min", summary["min"], float(min(per_call)))
        a.same(f"{name}.per_call_summary_ns.max", summary["max"], float(max(per_call)))
    return per_call


def audit_device(a, device, samples):
    complete = True
    for metric in ("throughput", "latency"):
        m = device[metric]
        control = m["control"]
        complete &= len(control["elapsed_ns"]) == samples
        audit_phase(a, control, f"device.{metric}.control", samples, check_count=False)
        a.same(f"device.{metric}.order (count)", len(m["order"]), samples)
        for i, order in enumerate(m["order"]):
            a.same(f"device.{metric}.order[{i}]", order,
                   "control,probe" if i % 2 == 0 else "probe,control")
        probe = m["probe"]
        ratios = [r for r in m["probe_over_control"] if r is not None]
        if probe is not None:
            audit_phase(a, probe, f"device.{metric}.probe", samples, check_count=False)
            kernel = [s / probe["calls_per_sample"] for s in probe["kernel_sum_ns"]]
            if kernel:
                a.same(f"device.{metric}.probe.kernel_per_call_summary_ns.p50",
                       probe["kernel_per_call_summary_ns"]["p50"], median(kernel))
            if len(probe["elapsed_ns"]) == samples and len(control["elapsed_ns"]) == samples:
                for i in range(samples):
                    a.same(f"device.{metric}.probe_over_control[{i}]", m["probe_over_control"][i],
                           probe["elapsed_ns"][i] / control["elapsed_ns"][i])
        summary = m["probe_over_control_summary"]
        a.same(f"device.{metric}.probe_over_control_summary.pairs", summary["pairs"], len(ratios))
        if ratios:
            a.same(f"device.{metric}.probe_over_control_summary.median", summary["median"], median(ratios))
            a.same(f"device.{metric}.probe_over_control_summary.min", summary["min"], float(min(ratios)))
            a.same(f"device.{metric}.probe_over_control_summary.max", summary["max"], float(max(ratios)))
    a.same("device.control_complete", device["control_complete"], complete)
    return complete


# ---- tolerances and validity ---------------------------------------------------

def tolerance(op, n, k=None, realization=None):
    """docs/tolerances.md, re-implemented (n is k for gemm)."""
    if op == "gemm":
        return ((4e-2 if realization == "tensor" else 8e-5) * math.sqrt(k), 1e-5)
    return {
        "sum": (2e-5 * math.sqrt(n), 1e-5),
        "softmax": (1e-8, 5e-5),
        "rmsnorm": (1e-5, 1e-5),
        "layernorm": (1e-5, 1e-5),
        "add": (0.0, 2.0 ** -23),
        "gelu_add": (1e-6, 1e-5),
    }[op]


def audit_validity(a, case, samples):
    v = case["validation"]
    host = case["host"]
    if host is not None:
        audit_phase(a, host["throughput"], "host.throughput", samples)
        audit_phase(a, host["latency"], "host.latency", samples)
        a.same("host.latency.calls_per_sample", host["latency"]["calls_per_sample"], 1)
    device_ok = True
    if case["device"] is not None:
        device_ok = audit_device(a, case["device"], samples)
    passed = False
    if v is not None:
        atol, rtol = tolerance(case["op"], case["n"], case.get("k"), case.get("realization"))
        a.same("validation.atol", v["atol"], atol)
        a.same("validation.rtol", v["rtol"], rtol)
        passed = v["failed_elements"] == 0 and v["checked_elements"] > 0
        a.same("validation.passed", v["passed"], passed)
        if v["unwritten_elements"] > v["failed_elements"]:
            a.fail("validation.unwritten_elements", "unwritten elements must also count as failed")
        expected = case["m"] * (1 if case["op"] == "sum" else case["n"])
        a.same("validation.checked_elements", v["checked_elements"], expected)
    valid = host is not None and v is not None and passed and device_ok
    a.same("valid", case["valid"], valid)
    if valid and case["error"] is not None:
        a.fail("error", "a valid case carries an error")
    return valid


# ---- planner (METHOD.md §7 and docs/results-schema.md), re-implemented ------------

REDUCTIONS = {"sum": 1, "rmsnorm": 1, "softmax": 2, "layernorm": 2}
OVERHEAD = {"sum": 24, "softmax": 32, "rmsnorm": 36, "layernorm": 32}
# Calibrations that earlier planners used (layernorm 40 until its 1024-thread row combined the
# warps' partials by shuffle and fitted 64 registers): their records re-derive with their value.
EARLIER_OVERHEADS = {"layernorm": {40}}
STAT_WORDS = {"sum": 1, "rmsnorm": 1, "softmax": 2, "layernorm": 3}
PAYLOAD = {  # global read, global write, private write, private read (bytes per element)
    "sum": (4, 0, 4, 4), "rmsnorm": (8, 4, 4, 8), "softmax": (4, 4, 8, 12), "layernorm": (12, 4, 8, 12)}


def slots_of(n, width):
    """The most elements a lane owns, dealing groups of 4 round-robin (by counting)."""
    groups = -(-n // 4)
    full_rounds, extra = divmod(groups, width)
    owned = {}
    for lane in (0, max(extra - 1, 0), width - 1):
        g = full_rounds + (1 if lane < extra else 0)
        last_group = lane + (g - 1) * width if g > 0 else -1
        elements = 4 * g
        if last_group == groups - 1 and n % 4:
            elements -= 4 - n % 4
        owned[lane] = elements
    return max(owned.values())


def register_budget(threads, per_block):
    warps = -(-threads // 32)
    allocated = -(-warps // 4) * 4
    per_thread = per_block // (allocated * 32) // 8 * 8
    return min(per_thread, 255)


# The per-block term of each cost profile: score = rounds + 2*reductions*s + weight/p
# (analytic: METHOD.md §7; calibrated: docs/planner.md).
BLOCK_WEIGHT = {"analytic": 16, "calibrated": 32}


def candidate(op, m, n, s, p, limits, overhead, block_weight=16):
    red = REDUCTIONS[op]
    width = 32 * s
    threads = width * p
    slots = slots_of(n, width)
    rounds = slots * (5 if red == 2 else 3)
    storage = slots * (2 if red == 2 else 1)
    score = rounds + 2 * red * s + block_weight / p
    waves = max(1, -(-m // 64))
    gr, gw, pw, pr = PAYLOAD[op]
    c = {
        "subgroups": s, "packing": p, "width": width, "threads": threads, "slots": slots,
        "reductions": red, "rounds": rounds, "storage": storage, "score": score, "waves": waves,
        "kernel_score": score * waves, "shared_bytes": 0 if s == 1 else red * s * p * 4,
        "barrier_sites": 0 if s == 1 else red, "lane_utilisation": n / (width * slots),
        "independent_subgroups": p if s == 1 else 0, "thread_blocks": -(-m // p),
        "payload_bytes": {
            "program_global_read": gr * n, "program_global_write": 4 if op == "sum" else gw * n,
            "program_private_read": pr * n, "program_private_write": pw * n,
            "worker_private_read": pr * slots, "worker_private_write": pw * slots},
    }
    rejected = threads > 1024 or storage > 64
    if limits["known"]:
        rejected |= threads > limits["max_threads_per_block"]
        rejected |= c["shared_bytes"] > limits["max_shared_bytes_per_block"]
        per_block = limits.get("max_registers_per_block", 0)
        if per_block and threads <= 1024:
            rejected |= slots + overhead > register_budget(threads, per_block)
    c["rejected"] = rejected
    return c


def expected_plan(record):
    op, m, n, variant = record["op"], record["m"], record["n"], record["variant"]
    limits = record["device_limits"]
    pairs = [(1, p) for p in range(1, 9)] + [(s, 1) for s in range(2, 33)]
    overhead = record["constants"]["register_overhead"]
    weight = BLOCK_WEIGHT[record["profile"]]
    cands = [candidate(op, m, n, s, p, limits, overhead, weight) for s, p in pairs]
    best = None
    for i, c in enumerate(cands):
        if not c["rejected"] and (best is None or c["kernel_score"] < cands[best]["kernel_score"]):
            best = i
    plan = {"candidates": cands, "best": best, "mapping": None, "selected": None, "chosen": None}
    sms = limits["multiprocessors"]
    # clusters (docs/results-schema.md): records before them carry no cluster_blocks
    cluster_limit = limits.get("cluster_blocks", 0)
    cluster_k = split_chunks(m, n, sms, cluster_limit) if cluster_limit >= 2 else 0
    if variant == "automatic":
        if m < sms and n >= 8192 and cluster_k and 2 * m * cluster_k >= sms:
            plan["mapping"] = "cluster_row"
        elif m < sms and n >= 8192:
            plan["mapping"] = "split_row"
        elif best is not None:
            plan["mapping"], plan["selected"], plan["chosen"] = "register_rows", cands[best], best
        else:
            plan["mapping"] = "block_streaming"
    else:
        s, p = (1, 8) if variant == "reference" else (2, 4)
        fixed = candidate(op, m, n, s, p, limits, overhead, weight)
        plan["fixed"] = fixed
        if not fixed["rejected"]:
            plan["mapping"], plan["selected"] = "register_rows", fixed
            plan["chosen"] = pairs.index((s, p)) if (s, p) in pairs else None
        else:
            plan["mapping"] = "block_streaming"
    if plan["mapping"] in ("block_streaming", "split_row", "cluster_row"):
        words = STAT_WORDS[op]
        if plan["mapping"] == "block_streaming":
            threads, per_row, chunk, blocks, launches = 512, 1, n, m, 1
        else:
            k = cluster_k if plan["mapping"] == "cluster_row" else split_chunks(m, n, sms, 0)
            chunk = -(-(-(-n // k)) // 4) * 4
            per_row = -(-n // chunk)
            threads, blocks = 256, m * per_row
            launches = 1 if plan["mapping"] == "cluster_row" else 2
        plan["stream"] = {"threads_per_block": threads, "blocks_per_row": per_row,
                          "chunk_elements": chunk, "thread_blocks": blocks,
                          "memory_passes": 1 if op == "sum" else 2, "launches": launches,
                          "shared_bytes": words * (threads // 32) * 4, "barrier_sites": 1}
        if plan["mapping"] == "cluster_row":
            cluster_facts(plan["stream"], record["stream"], op, words, per_row, chunk, threads)
        elif "cluster_blocks" in (record.get("stream") or {}):
            plan["stream"]["cluster_blocks"] = 0
    return plan


def cluster_facts(stream, recorded, op, words, per_row, chunk, threads):
    """A cluster row's facts beyond the split's: one cluster of per_row blocks, each keeping its
    statistics in shared memory for the others, and the kernel generation that made the record."""
    stream["cluster_blocks"] = per_row
    if recorded["barrier_sites"] == 1:
        # the first cluster kernel (0a06e8e): every thread read the row's statistics from the
        # other blocks itself, no fetch into shared memory and no barrier for it
        stream["shared_bytes"] += 4 * words
        return
    # the row's per_row statistics fetched into shared memory, then a barrier before the merge
    stream["barrier_sites"] = 2
    stream["shared_bytes"] += 4 * words * (1 + per_row)
    # a chunk of at most 32 floats a thread stays in registers: one memory pass (e8e570a still
    # streamed it twice; its records say 2, and the source check finds no cache in them)
    streamed_twice = recorded["memory_passes"] == 2 and op != "sum"
    if chunk <= 32 * threads and not streamed_twice:
        stream["memory_passes"] = 1


def split_chunks(m, n, sms, most):
    """Blocks per row of a split: ~2 per SM, chunks >= 2048 elements, at most `most` if set, >= 2."""
    k = min(-(-2 * sms // m), n // 2048)
    if most:
        k = min(k, most)
    return max(2, k)


def audit_candidate(a, recorded, expected, field):
    for key, value in expected.items():
        if key == "payload_bytes":
            for k2, v2 in value.items():
                a.same(f"{field}.payload_bytes.{k2}", recorded["payload_bytes"][k2], v2)
        elif key == "rejected":
            a.same(f"{field}.rejected", recorded["rejected"], value)
        else:
            a.same(f"{field}.{key}", recorded[key], float(value) if isinstance(value, float) else value,
                   rel=1e-12)


GEMM_PRECISION = {"simt": "fp32", "tensor": "tf32", "tensor-3xtf32": "fp32 (3xTF32 split)"}


def audit_gemm_precision(a, case):
    """The label every report carries, and every provider computing at it:
    TF32 exactly for the `tensor` realization (docs/gemm.md)."""
    realization = case["realization"]
    a.same("precision", case["precision"], GEMM_PRECISION[realization])
    a.same("id (realization suffix)", case["id"].rsplit("/", 1)[1], realization)
    details = case.get("provider_details") or {}
    tf32 = realization == "tensor"
    if "cublas" in details:
        a.same("provider_details.cublas.math_mode", details["cublas"]["math_mode"],
               "CUBLAS_TF32_TENSOR_OP_MATH" if tf32 else "CUBLAS_DEFAULT_MATH")
        a.same("provider_details.cublas.precision", details["cublas"]["precision"],
               "tf32" if tf32 else "fp32")
    if case["provider"] in ("torch", "torch-compile") and details.get("implementation"):
        a.same("provider_details.implementation (allow_tf32)",
               f"allow_tf32={tf32}" in details["implementation"], True)


def ceil_div(x, y):
    return -(-x // y)


def is_wgmma_tile(bm, bn, bk):
    return bm == 128 and bn in (128, 256) and bk == 32


def gemm_rule_tile(record, warpgroup_mma):
    """docs/gemm.md's rule (or the user's block) for the record's realization,
    on a device with wgmma (compute capability 9.0) or without."""
    m, n, sms, tile = record["m"], record["n"], record["multiprocessors"], record["tile"]
    user = record["profile"] == "user-block"
    if user:
        return tile["block_m"], tile["block_n"], tile["block_k"]
    if record["realization"] == "simt":
        # the rule's tiles; records of the register-prefetch kernel (2 stages) used 128x64x16
        # first, and rules recorded before 128x256x32 joined the list start at 128x128x32
        tiles = [(128, 64, 16), (64, 64, 16)] if record["stages"] == 2 else \
            [(128, 128, 32), (128, 64, 32), (64, 64, 16)]
        wide = ceil_div(m, 128) * ceil_div(n, 256)
        if "fill at least 90" in record["rule"]:
            # 128x256x32 when its blocks fill at least 90 % of its waves (one block an SM)
            if 10 * wide >= 9 * ceil_div(wide, sms) * sms:
                return 128, 256, 32
        elif "128x256x32" in record["rule"]:  # first in the list, 2026-11-29 fifth session
            tiles = [(128, 256, 32)] + tiles
        return next((t for t in tiles if ceil_div(m, t[0]) * ceil_div(n, t[1]) >= sms), (32, 32, 32))
    large = ceil_div(m, 128) * ceil_div(n, 128) >= sms
    if large and warpgroup_mma and record["realization"] == "tensor":
        return (128, 256, 32) if ceil_div(m, 128) * ceil_div(n, 256) >= sms else (128, 128, 32)
    return (128, 128, 32) if large else (64, 64, 32)


def simt_facts(a, record, bm, bn, bk):
    """The SIMT kernel's facts for a bm x bn x bk tile."""
    if record["profile"] == "user-block" and not (
            bm in (32, 64, 128) and (bn in (32, 64, 128) or (bn, bm) == (256, 128))
            and bk in (8, 16, 32) and bm * bk >= 1024 and bn * bk >= 1024):
        a.fail("plan.tile", f"simt does not support the tile {bm}x{bn}x{bk}")
    f = {"tm": bm // 16, "tn": bn // 16, "warps": (0, 0), "warpgroups": 0, "threads": 256,
         "instruction": "fma"}
    if record["stages"] == 2:
        # the register-prefetch kernel (two buffers, A transposed) that planned simt
        # before the cp.async pipeline: its records re-derive with its own layout
        f.update(stages=2, barriers=2, shared=4 * 2 * bk * ((bm + 4) + bn))
    else:
        f.update(stages=3, barriers=1, shared=4 * 3 * (bm * (bk + 4) + bk * (bn + 4)))
    # two blocks an SM, one for 128 accumulators a thread (128x256)
    f["per_sm"] = 1 if f["tm"] * f["tn"] > 64 else 2
    return f


def wgmma_facts(record, bm, bn, bk):
    """The wgmma kernel's facts: two warpgroups of 64 rows; stages of (bm + bn) rows of bk
    TF32 values, 1024 bytes to align them to the swizzle's period, an 8-byte mbarrier a
    stage; barriers: the packing launch's, after the mbarriers' set-up, one per k tile."""
    if "launches" in record:
        # the packed kernel; 128x128 keeps 3 stages (two blocks an SM) since its records
        # carry blocks_per_multiprocessor, 4 before
        stages = 3 if bn == 128 and "blocks_per_multiprocessor" in record else 4
        barriers, slack = 3, 1024 + 8 * stages
    else:
        # the first wgmma kernel (one launch, tiles staged through registers:
        # evidence/2026-11-29-h200-wgmma-register-staged): 3 stages, no mbarriers,
        # barriers after the first stage and one per k tile
        stages, barriers, slack = 3, 2, 1024
    return {"tm": 64, "tn": bn, "warps": (0, 0), "warpgroups": 2, "threads": 256,
            "stages": stages, "barriers": barriers, "shared": 4 * stages * (bm + bn) * bk + slack,
            "instruction": f"wgmma.m64n{bn}k8", "per_sm": 1 if bn == 256 else 2}


def mma_sync_facts(a, record, bm, bn, bk):
    """The mma.sync kernel's facts: 2 x (4 or 2) warps, 3 stages of cp.async."""
    if record["profile"] == "user-block" and not (
            bm in (64, 128) and bn in (64, 128) and bk in (16, 32)):
        a.fail("plan.tile", f"mma.sync does not support the tile {bm}x{bn}x{bk}")
    warps_m, warps_n = 2, (4 if bn == 128 else 2)
    threads = 32 * warps_m * warps_n
    # two blocks an SM; the 3xTF32 split at 256 threads needs one block's registers
    split = record["realization"] == "tensor-3xtf32"
    return {"tm": bm // warps_m, "tn": bn // warps_n, "warps": (warps_m, warps_n),
            "warpgroups": 0, "threads": threads, "stages": 3, "barriers": 1,
            "shared": 4 * 3 * (bm * (bk + 4) + bk * (bn + 8)), "instruction": "mma.sync.m16n8k8",
            "per_sm": 1 if split and threads == 256 else 2}


def audit_gemm_plan(a, record, case, device_capability):
    """The tile rule of each realization, re-derived with every derived fact.
    Records from before the wgmma kernel carry no `instruction`: their tensor
    plans are mma.sync's whatever the device. Fields a kernel generation did
    not record yet are not asked of it."""
    m, n, k, realization = record["m"], record["n"], record["k"], record["realization"]
    a.same("plan.realization", realization, case.get("realization"))
    warpgroup_mma = "instruction" in record and device_capability == "9.0"
    bm, bn, bk = gemm_rule_tile(record, warpgroup_mma)
    wgmma = warpgroup_mma and realization == "tensor" and is_wgmma_tile(bm, bn, bk)
    if realization == "simt":
        f = simt_facts(a, record, bm, bn, bk)
    elif wgmma:
        f = wgmma_facts(record, bm, bn, bk)
    else:
        f = mma_sync_facts(a, record, bm, bn, bk)
    if "blocks_per_multiprocessor" in record:  # __launch_bounds__' minimum
        a.same("plan.blocks_per_multiprocessor", record["blocks_per_multiprocessor"], f["per_sm"])
    if "instruction" in record:
        a.same("plan.instruction", record["instruction"], f["instruction"])
        a.same("plan.warpgroups", record["warpgroups"], f["warpgroups"])
    a.same("plan.tile", record["tile"], {"block_m": bm, "block_n": bn, "block_k": bk,
                                         "thread_m": f["tm"], "thread_n": f["tn"],
                                         "warps_m": f["warps"][0], "warps_n": f["warps"][1]})
    a.same("plan.threads", record["threads"], f["threads"])
    a.same("plan.stages", record["stages"], f["stages"])
    packed = case["input_view"]["kind"] == "packed"
    a.same("plan.vector_width", record["vector_width"], 4 if packed and k % 4 == 0 and n % 4 == 0 else 1)
    grid_m, grid_n = ceil_div(m, bm), ceil_div(n, bn)
    a.same("plan.grid_m", record["grid_m"], grid_m)
    a.same("plan.grid_n", record["grid_n"], grid_n)
    a.same("plan.thread_blocks", record["thread_blocks"], grid_m * grid_n)
    a.same("plan.shared_bytes", record["shared_bytes"], f["shared"])
    a.same("plan.waves", record["waves"], ceil_div(grid_m * grid_n, record["multiprocessors"]))
    a.same("plan.barrier_sites", record["barrier_sites"], f["barriers"])
    if "launches" in record:
        # wgmma packs A and B (rounded to TF32, zeros past the edges) in a first launch:
        # a chunk of bm x bk and of bn x bk per block
        tiles = ceil_div(k, bk)
        a.same("plan.launches", record["launches"], 2 if wgmma else 1)
        a.same("plan.pack_blocks", record["pack_blocks"], (grid_m + grid_n) * tiles if wgmma else 0)
        a.same("plan.workspace_floats", record["workspace_floats"],
               (grid_m * bm + grid_n * bn) * tiles * bk if wgmma else 0)
    return {"mapping": "gemm", "barriers": f["barriers"]}


def audit_plan(a, record, case, device_capability):
    if record["kind"] == "gemm":
        return audit_gemm_plan(a, record, case, device_capability)
    if record["kind"] == "elementwise":
        # Packed rows are walked as one row of m*n; records made before that
        # rule carry no "flat" and were planned row by row.
        flat = "flat" in record and case["input_view"]["kind"] == "packed"
        if "flat" in record:
            a.same("plan.flat", record["flat"], flat)
        n, m = (record["m"] * record["n"], 1) if flat else (record["n"], record["m"])
        tpr = -(-n // 4)
        a.same("plan.threads_per_row", record["threads_per_row"], tpr)
        a.same("plan.thread_blocks", record["thread_blocks"], -(-(m * tpr) // 256))
        return None
    a.same("plan.profile (a known cost profile)", record["profile"] in BLOCK_WEIGHT, True)
    if "block_weight" in record["constants"]:  # recorded since the calibrated profile
        a.same("plan.constants.block_weight", record["constants"]["block_weight"],
               BLOCK_WEIGHT[record["profile"]])
    overhead = record["constants"]["register_overhead"]
    if overhead not in EARLIER_OVERHEADS.get(record["op"], set()):
        a.same("plan.constants.register_overhead", overhead, OVERHEAD[record["op"]])
    plan = expected_plan(record)
    a.same("plan.candidates (count)", len(record["candidates"]), 39)
    for i, (rec, exp) in enumerate(zip(record["candidates"], plan["candidates"])):
        audit_candidate(a, rec, exp, f"plan.candidates[{i}]")
    a.same("plan.candidates_rejected", record["candidates_rejected"],
           sum(c["rejected"] for c in plan["candidates"]))
    a.same("plan.best_register_candidate", record["best_register_candidate"], plan["best"])
    a.same("plan.mapping", record["mapping"], plan["mapping"])
    a.same("plan.chosen_candidate", record["chosen_candidate"], plan["chosen"])
    if plan["selected"] is not None:
        audit_candidate(a, record["selected"], plan["selected"], "plan.selected")
    if "fixed" in plan:
        audit_candidate(a, record["fixed_variant"], plan["fixed"], "plan.fixed_variant")
    if "stream" in plan:
        for key, value in plan["stream"].items():
            a.same(f"plan.stream.{key}", record["stream"][key], value)
    return plan


# ---- sources -------------------------------------------------------------------

def audit_source(a, run_dir, case, plan):
    sha = case.get("source_sha256")
    if sha is None:
        return
    path = os.path.join(run_dir, "sources", sha + ".cu")
    if not os.path.exists(path):
        a.fail("source_sha256", f"no archived source {path}")
    with open(path, "rb") as f:
        text = f.read()
    a.same("source_sha256 (hash of the archived file)", hashlib.sha256(text).hexdigest(), sha)
    source = text.decode()
    if plan is None:  # elementwise
        a.same("source: barriers", source.count("__syncthreads()"), 0)
        return
    if plan["mapping"] == "gemm":
        a.same("source: barriers", source.count("__syncthreads()"), plan["barriers"])
        return
    expected = plan["selected"]["barrier_sites"] if plan["mapping"] == "register_rows" else plan["stream"]["barrier_sites"]
    a.same("source: __syncthreads() sites vs plan barrier sites", source.count("__syncthreads()"), expected)
    clustered = plan["mapping"] == "cluster_row"
    dims = f"__cluster_dims__({plan['stream']['cluster_blocks']}, 1, 1)" if clustered else "__cluster_dims__"
    a.same("source: cluster dimensions as planned", dims in source, clustered)
    if clustered and case["op"] != "sum":
        a.same("source: the chunk cached in registers iff one memory pass is planned",
               "#define ITERS" in source, plan["stream"]["memory_passes"] == 1)
    if "__shfl_xor_sync" not in source:
        a.fail("source", "a row reduction without warp-shuffle reduction")
    has_max = "tb_warp_max" in source or "tb_softmax_merge" in source
    a.same("source: max reduction present", has_max, case["op"] == "softmax")


# ---- replay --------------------------------------------------------------------

METRICS = ("gpu_throughput", "gpu_latency", "host_throughput", "host_latency")


def metric_value(case, metric):
    if metric.startswith("gpu"):
        device = case["device"]
        if device is None or not device["control_complete"]:
            return None
        phase = device["throughput" if metric.endswith("throughput") else "latency"]["control"]
    else:
        if case["host"] is None:
            return None
        phase = case["host"]["throughput" if metric.endswith("throughput") else "latency"]
    return median(phase["per_call_ns"])


def audit_replay(a, doc):
    replay, info = doc["replay"], doc["run"]["replay"]
    rounds = info["rounds"]
    ref, cand = info["reference"], info["candidate"]
    a.where = "replay"
    a.same("rounds", replay["rounds"], rounds)
    orders = info["variant_order"]
    a.same("run.replay.variant_order (count)", len(orders), rounds)
    firsts = [o[0] for o in orders]
    a.same("position balance: rounds with the reference first", firsts.count(ref), rounds // 2)
    a.same("position balance: rounds with the candidate first", firsts.count(cand), rounds // 2)
    for r, o in enumerate(orders):
        a.same(f"run.replay.variant_order[{r}]", o, [ref, cand] if r % 2 == 0 else [cand, ref])
    table, seen, keys = {}, set(), []
    frameworks = {}  # base -> provider -> round -> record
    for case in doc["cases"]:
        if case["provider"] != "native":
            base = case["id"].rsplit("/", 1)[0]
            per_round = frameworks.setdefault(base, {}).setdefault(case["provider"], {})
            if case["round"] in per_round:
                a.fail("cases", f"{case['id']} round {case['round']} appears twice")
            per_round[case["round"]] = case
            continue
        key = case["id"].rsplit("/", 1)[0]
        ident = (key, case["variant"], case["round"])
        if ident in seen:
            a.fail("cases", f"{key} {case['variant']} round {case['round']} appears twice")
        seen.add(ident)
        if key not in table:
            table[key] = {}
            keys.append(key)
        table[key][(case["variant"], case["round"])] = case
    a.same("cases (paired keys)", [c["case"] for c in replay["cases"]], keys)
    counts = {m: {"cases": 0, "withheld": 0, "positive_median": 0, "all_pairs_positive": 0,
                  "all_pairs_negative": 0} for m in METRICS}
    predicted = 0
    versus_counts = {}
    for entry in replay["cases"]:
        key = entry["case"]
        a.where = f"replay {key}"
        for r in range(rounds):
            for v in (ref, cand):
                if (v, r) not in table[key]:
                    a.fail("cases", f"{v} round {r} is missing")
        for metric in METRICS:
            rec = entry["metrics"][metric]
            refs = [metric_value(table[key][(ref, r)], metric) for r in range(rounds)]
            cands = [metric_value(table[key][(cand, r)], metric) for r in range(rounds)]
            counts[metric]["cases"] += 1
            for r in range(rounds):
                a.same(f"{metric}.reference_p50_ns[{r}]", rec["reference_p50_ns"][r], refs[r])
                a.same(f"{metric}.candidate_p50_ns[{r}]", rec["candidate_p50_ns"][r], cands[r])
            if any(x is None for x in refs + cands):
                if rec["withheld"] is None:
                    a.fail(f"{metric}.withheld", "a round lacks its pair but figures are shown")
                counts[metric]["withheld"] += 1
                continue
            if rec["withheld"] is not None:
                a.fail(f"{metric}.withheld", "every round has its pair but the figures are withheld")
            gains = [x / y for x, y in zip(refs, cands)]
            for r, g in enumerate(gains):
                a.same(f"{metric}.gain[{r}]", rec["gain"][r], g)
            a.same(f"{metric}.median", rec["median"], median(gains))
            a.same(f"{metric}.min", rec["min"], min(gains))
            a.same(f"{metric}.max", rec["max"], max(gains))
            verdict = ("faster in all pairs" if min(gains) > 1 else
                       "slower in all pairs" if max(gains) < 1 else "inconclusive")
            a.same(f"{metric}.verdict", rec["verdict"], verdict)
            counts[metric]["positive_median"] += median(gains) > 1
            counts[metric]["all_pairs_positive"] += min(gains) > 1
            counts[metric]["all_pairs_negative"] += max(gains) < 1
        scores = []
        for v in (ref, cand):
            plans = table[key][(v, 0)]["execution_plans"]
            sel = plans[0].get("selected") if plans else None
            scores.append(sel["kernel_score"] if sel else None)
        better = None if None in scores else scores[1] < scores[0]
        a.same("model_predicts_candidate_better", entry["model_predicts_candidate_better"], better)
        predicted += bool(better)
        audit_versus(a, entry, table[key], frameworks.get(key.rsplit("/", 1)[0], {}), ref, cand,
                     rounds, versus_counts)
    a.where = "replay"
    for metric in METRICS:
        for k, v in counts[metric].items():
            a.same(f"counts.{metric}.{k}", replay["counts"][metric][k], v)
    a.same("model_predicts_candidate_better (count)", replay["model_predicts_candidate_better"], predicted)
    a.same("native_over_framework_counts", replay.get("native_over_framework_counts", {}), versus_counts)
    audit_provider_balance(a, doc["cases"], rounds)


def audit_versus(a, entry, native, frameworks, ref, cand, rounds, counts):
    """ratio_r = native_r / framework_r per variant and metric (METHOD.md §3)."""
    # absent in runs recorded before frameworks took part: then there must be none
    recorded = entry.get("native_over_framework", {})
    a.same("native_over_framework (providers)", sorted(recorded), sorted(frameworks))
    for provider, per_round in frameworks.items():
        for variant in (ref, cand):
            for metric in METRICS:
                field = f"native_over_framework.{provider}.{variant}.{metric}"
                rec = recorded[provider][variant][metric]
                count = counts.setdefault(provider, {}).setdefault(variant, {}).setdefault(
                    metric, {"cases": 0, "withheld": 0, "native_faster_in_all_pairs": 0,
                             "native_slower_in_all_pairs": 0})
                count["cases"] += 1
                ratios = []
                for r in range(rounds):
                    n = metric_value(native[(variant, r)], metric)
                    f = metric_value(per_round[r], metric) if r in per_round else None
                    ratios.append(None if n is None or f is None or f == 0 else n / f)
                if None in ratios:
                    if rec["withheld"] is None:
                        a.fail(f"{field}.withheld", "a round lacks its pair but figures are shown")
                    count["withheld"] += 1
                    continue
                for r, x in enumerate(ratios):
                    a.same(f"{field}.ratio[{r}]", rec["ratio"][r], x)
                a.same(f"{field}.median", rec["median"], median(ratios))
                verdict = ("native faster in all pairs" if max(ratios) < 1 else
                           "native slower in all pairs" if min(ratios) > 1 else "inconclusive")
                a.same(f"{field}.verdict", rec["verdict"], verdict)
                count["native_faster_in_all_pairs"] += max(ratios) < 1
                count["native_slower_in_all_pairs"] += min(ratios) > 1


def audit_provider_balance(a, cases, rounds):
    """With two providers, each goes first in half the rounds of every case."""
    first = {}
    for case in cases:
        # native ids end in /native/<variant>, framework ids in /<provider>
        base = case["id"].rsplit("/", 2 if case["provider"] == "native" else 1)[0]
        if case.get("provider_position") is not None:
            first.setdefault((base, case["provider"]), []).append((case["round"], case["provider_position"]))
    providers = {}
    for (base, provider) in first:
        providers.setdefault(base, set()).add(provider)
    for (base, provider), seen in first.items():
        if len(providers[base]) != 2:
            continue
        rounds_first = {r for r, position in seen if position == 0}
        a.same(f"provider balance: rounds with {provider} first for {base}", len(rounds_first), rounds // 2)


# ---- runs ------------------------------------------------------------------------

def environment(doc):
    prov = doc["provenance"]
    gpu = prov.get("gpu") or {}
    devices = [(d.get("name"), d.get("compute_capability")) for d in gpu.get("devices", [])]
    executable = [x["sha256"] for x in prov["artifacts"] if x["role"] == "executable"]
    return {"os": prov["host"].get("os"), "cpu": prov["host"].get("cpu_model"),
            "gpu": devices, "driver": gpu.get("driver_cuda_version"), "executable": executable}


def results_path(run_dir):
    """results.json, or results.json.gz where committed evidence stores a large run compressed."""
    path = os.path.join(run_dir, "results.json")
    return path if os.path.exists(path) or not os.path.exists(path + ".gz") else path + ".gz"


def read_results(path):
    """The results file's bytes (decompressed: its digest is the written file's)."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            return f.read()
    except (EOFError, gzip.BadGzipFile) as e:  # a truncated or foreign .gz: malformed, not a crash
        raise ValueError(f"not a complete gzip file ({e})") from e


def audit_run(a, run_dir, check_current):
    path = results_path(run_dir)
    a.where = path
    raw = read_results(path)
    doc = json.loads(raw)
    if doc.get("schema") != "tilebench.results" or doc.get("schema_version") != 1:
        a.fail("schema", "not a tilebench results file of schema version 1")
    samples = doc["run"]["measure"]["samples"]
    devices = (doc["provenance"].get("gpu") or {}).get("devices") or [{}]
    capability = devices[0].get("compute_capability")  # the run's device: ordinal 0
    valid = 0
    for case in doc["cases"]:
        a.where = f"{path} case {case['id']}" + (f" round {case['round']}" if "round" in case else "")
        valid += audit_validity(a, case, samples)
        if case["op"] == "gemm":
            audit_gemm_precision(a, case)
        plans = [audit_plan(a, p, case, capability) for p in case["execution_plans"]]
        if case["execution_plans"]:
            audit_source(a, run_dir, case, plans[0])
        for record in case["execution_plans"]:
            if record["kind"] == "row_reduction":  # planned under the run's profile (analytic before)
                a.same("plan.profile (the run's planner_profile)", record["profile"],
                       doc["run"].get("planner_profile", "analytic"))
    if "replay" in doc:  # its structure first: the clearest message for a missing round
        audit_replay(a, doc)
    a.where = path
    a.same("run.valid_cases", doc["run"]["valid_cases"], valid)
    if check_current:
        for art in doc["provenance"]["artifacts"]:
            a.where = f"{path} artifact {art['path']}"
            with open(art["path"], "rb") as f:
                a.same("sha256 (current file)", hashlib.sha256(f.read()).hexdigest(), art["sha256"])
    return doc, hashlib.sha256(raw).hexdigest()


def main(argv):
    parser = argparse.ArgumentParser(prog="tilebench audit", description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", metavar="DIR")
    parser.add_argument("--receipt")
    parser.add_argument("--check-current-artifacts", action="store_true")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if args.receipt and os.path.exists(args.receipt):
        print(f"tilebench audit: receipt {args.receipt} exists; receipts are never overwritten",
              file=sys.stderr)
        return 2
    a = Audit()
    inputs, environments = [], []
    try:
        for d in args.dirs:
            if not os.path.exists(results_path(d)):
                print(f"tilebench audit: {d}/results.json not found", file=sys.stderr)
                return 2
            doc, digest = audit_run(a, d, args.check_current_artifacts)
            inputs.append({"dir": d, "results_sha256": digest, "cases": len(doc["cases"]),
                           "replay": "replay" in doc})
            environments.append(environment(doc))
        a.where = "environments"
        for i, env in enumerate(environments[1:], start=1):
            a.same(f"{args.dirs[i]} vs {args.dirs[0]}", env, environments[0])
    except Discrepancy as d:
        print(f"tilebench audit: DISCREPANCY {d}", file=sys.stderr)
        return 1
    except (KeyError, TypeError, ValueError) as e:
        print(f"tilebench audit: DISCREPANCY {a.where}: malformed record ({type(e).__name__}: {e})",
              file=sys.stderr)
        return 1
    print(f"tilebench audit: {a.checks} checks passed over {len(inputs)} run(s)")
    if args.receipt:
        receipt = {"audit_version": AUDIT_VERSION, "checks": a.checks, "inputs": inputs,
                   "verdict": "all figures re-derived"}
        try:
            with open(args.receipt, "x") as f:  # exclusive create
                json.dump(receipt, f, indent=1, sort_keys=True)
        except FileExistsError:
            print(f"tilebench audit: receipt {args.receipt} exists", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
