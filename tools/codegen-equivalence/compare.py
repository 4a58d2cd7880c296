#!/usr/bin/env python3
"""Compares the kernels two code generators emit for the same plans.

    compare.py OLD_DIR NEW_DIR [--jobs J] [--sample K] [--only REGEX]

OLD_DIR and NEW_DIR hold one <label>.cu per plan (tests/test_codegen_golden.c
writes them with TB_GOLDEN_DUMP=<dir>; check.sh makes both). Sources with the
same bytes are identical kernels. The others are compiled with NVRTC
(libnvrtc.so.13) as the CUDA backend does (src/backends/cuda/nvrtc.c:
--gpu-architecture=sm_90, sm_90a for wgmma code, --std=c++17,
--ptxas-options=-v) and compared three ways:
  ptx      the PTX with comments, blank lines and symbol names (the mangled
           names of shared arrays in template functions) normalized;
  sass     the machine code: the bytes of every .text.* section of the cubin;
  ptxas    registers, spills and stack frame from ptxas's report.
Each distinct (old, new) pair is compiled once. Exit status 1 when any pair's
machine code differs. Needs only the standard library and NVRTC (no GPU).
"""
import argparse
import ctypes
import multiprocessing
import os
import re
import struct
import sys

_nvrtc = None


def nvrtc():
    global _nvrtc
    if _nvrtc is None:
        home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        for path in ("libnvrtc.so.13", os.path.join(home, "lib64", "libnvrtc.so.13")):
            try:
                _nvrtc = ctypes.CDLL(path)
                break
            except OSError:
                continue
        else:
            sys.exit("libnvrtc.so.13 not found (set CUDA_HOME)")
    return _nvrtc


def compile_source(text):
    """(ptx, cubin, log) of a source, compiled as the backend compiles it."""
    lib = nvrtc()
    prog = ctypes.c_void_p()
    src = text.encode()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"tilebench_kernel.cu", 0, None, None)
    if rc != 0:
        raise RuntimeError(f"nvrtcCreateProgram: {rc}")
    arch = b"sm_90a" if b"wgmma" in src else b"sm_90"
    options = [b"--gpu-architecture=" + arch, b"--std=c++17", b"--ptxas-options=-v"]
    argv = (ctypes.c_char_p * len(options))(*options)
    rc = lib.nvrtcCompileProgram(prog, len(options), argv)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    log = log.value.decode(errors="replace")
    if rc != 0:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return None, None, log
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, ptx)
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx.value.decode(), cubin.raw, log


def normalize_ptx(ptx):
    """PTX without comments and blank lines, symbols renamed in order of use."""
    names = {}

    def rename(match):
        return names.setdefault(match.group(0), f"SYM{len(names)}")

    lines = []
    for line in ptx.splitlines():
        line = re.sub(r"//.*", "", line).strip()
        if line:
            lines.append(re.sub(r"\b_Z[A-Za-z0-9_$]+", rename, line))
    return "\n".join(lines)


def text_sections(cubin):
    """{name: bytes} of the cubin's .text.* sections (ELF64)."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    strtab = sections[shstrndx]
    names = cubin[strtab[4]:strtab[4] + strtab[5]]
    result = {}
    for s in sections:
        name = names[s[0]:names.index(b"\0", s[0])].decode()
        if name.startswith(".text."):
            result[name] = cubin[s[4]:s[4] + s[5]]
    return result


def ptxas_figures(log):
    """[(kernel, registers, spill stores, spill loads, stack)] from ptxas -v."""
    figures = []
    for kernel, body in re.findall(r"Compiling entry function '(\w+)'(.*?)(?=Compiling entry|\Z)", log, re.S):
        regs = re.search(r"Used (\d+) registers", body)
        stack = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", body)
        spills = tuple(int(g) for g in stack.groups()) if stack else (-1, -1, -1)
        figures.append((kernel, int(regs.group(1)) if regs else -1, spills[1], spills[2], spills[0]))
    return figures


def compare_pair(pair):
    old_text, new_text = pair
    old_ptx, old_cubin, old_log = compile_source(old_text)
    new_ptx, new_cubin, new_log = compile_source(new_text)
    if old_ptx is None or new_ptx is None:
        return {"error": (old_log if old_ptx is None else "") + (new_log if new_ptx is None else "")}
    return {
        "ptx_raw": old_ptx == new_ptx,
        "ptx": normalize_ptx(old_ptx) == normalize_ptx(new_ptx),
        "sass": text_sections(old_cubin) == text_sections(new_cubin),
        "old_ptxas": ptxas_figures(old_log),
        "new_ptxas": ptxas_figures(new_log),
        "old_ptx": old_ptx if normalize_ptx(old_ptx) != normalize_ptx(new_ptx) else None,
        "new_ptx": new_ptx if normalize_ptx(old_ptx) != normalize_ptx(new_ptx) else None,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="labels matching this regular expression")
    parser.add_argument("--sample", type=int, default=0,
                        help="compile at most this many distinct pairs (every K-th, deterministic)")
    parser.add_argument("--keep", help="directory for the PTX of pairs that differ")
    parser.add_argument("--list", help="file for the list of pairs that differ (default: stdout)")
    args = parser.parse_args()
    old_labels = {f[:-3] for f in os.listdir(args.old) if f.endswith(".cu")}
    new_labels = {f[:-3] for f in os.listdir(args.new) if f.endswith(".cu")}
    if old_labels != new_labels:
        print(f"labels only in {args.old}: {sorted(old_labels - new_labels)[:10]}")
        print(f"labels only in {args.new}: {sorted(new_labels - old_labels)[:10]}")
    labels = sorted(old_labels & new_labels)
    if args.only:
        labels = [l for l in labels if re.search(args.only, l.replace("+", "/"))]
    same_bytes, pairs = 0, {}
    for label in labels:
        with open(os.path.join(args.old, label + ".cu")) as f:
            old = f.read()
        with open(os.path.join(args.new, label + ".cu")) as f:
            new = f.read()
        if old == new:
            same_bytes += 1
        else:
            pairs.setdefault((old, new), []).append(label.replace("+", "/"))
    keys = list(pairs)
    if args.sample and len(keys) > args.sample:
        step = len(keys) / args.sample
        keys = [keys[int(i * step)] for i in range(args.sample)]
    print(f"{len(labels)} plans: {same_bytes} with identical bytes, {len(labels) - same_bytes} "
          f"changed in {len(pairs)} distinct (old, new) pairs; compiling {len(keys)} pairs "
          f"({len(keys) * 2} NVRTC compiles, {args.jobs} at a time)", flush=True)
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.map(compare_pair, keys, chunksize=1)
    counts = {"error": 0, "ptx_raw": 0, "ptx": 0, "sass": 0, "ptxas": 0}
    plans = {"ptx": 0, "sass": 0}
    differ = []
    for key, result in zip(keys, results):
        if "error" in result:
            counts["error"] += 1
            print(f"COMPILE ERROR {pairs[key][0]}:\n{result['error']}")
            continue
        for what in ("ptx_raw", "ptx", "sass"):
            counts[what] += result[what]
        counts["ptxas"] += result["old_ptxas"] == result["new_ptxas"]
        plans["ptx"] += len(pairs[key]) if result["ptx"] else 0
        plans["sass"] += len(pairs[key]) if result["sass"] else 0
        if not (result["ptx"] and result["sass"]):
            differ.append((key, result))
    compiled = len(keys) - counts["error"]
    print(f"pairs compiled: {compiled}; identical PTX as text: {counts['ptx_raw']}, normalized: "
          f"{counts['ptx']}; identical machine code: {counts['sass']}; identical ptxas figures: "
          f"{counts['ptxas']}; compile errors: {counts['error']}")
    covered = sum(len(pairs[k]) for k in keys)
    print(f"plans covered by the compiled pairs: {covered}; identical normalized PTX: {plans['ptx']}; "
          f"identical machine code: {plans['sass']}")
    # per operation and mapping: plans, identical machine code, register changes
    table = {}
    for key, result in zip(keys, results):
        if "error" in result:
            continue
        found = re.search(r"mapping (\w+)", key[0])
        kind = (pairs[key][0].split("/")[0], found.group(1) if found else "?")
        if kind[1] == "cluster_row":
            kind = (kind[0], "cluster_row " + ("cached" if "#define ITERS" in key[0] else "streamed"))
        row = table.setdefault(kind, {"plans": 0, "ptx": 0, "sass": 0, "more": 0, "fewer": 0, "worst": 0})
        weight = len(pairs[key])
        row["plans"] += weight
        row["ptx"] += weight * result["ptx"]
        row["sass"] += weight * result["sass"]
        old_regs = sum(f[1] for f in result["old_ptxas"])
        new_regs = sum(f[1] for f in result["new_ptxas"])
        row["more"] += weight * (new_regs > old_regs)
        row["fewer"] += weight * (new_regs < old_regs)
        row["worst"] = max(row["worst"], new_regs - old_regs)
    print("\noperation  mapping                changed plans  same PTX  same SASS  more regs  fewer regs  most added")
    for kind in sorted(table):
        row = table[kind]
        print(f"{kind[0]:10} {kind[1]:22} {row['plans']:13} {row['ptx']:9} {row['sass']:10} "
              f"{row['more']:10} {row['fewer']:11} {row['worst']:11}")
    listing = open(args.list, "w") if args.list else sys.stdout
    for key, result in differ:
        labels = pairs[key]
        print(f"DIFFERS ({'ptx' if not result['ptx'] else ''}{' sass' if not result['sass'] else ''}): "
              f"{', '.join(labels)}\n  old ptxas {result['old_ptxas']}\n"
              f"  new ptxas {result['new_ptxas']}", file=listing)
        if args.keep and result["old_ptx"]:
            os.makedirs(args.keep, exist_ok=True)
            stem = labels[0].replace("/", "+")
            for side in ("old", "new"):
                with open(os.path.join(args.keep, f"{stem}.{side}.ptx"), "w") as f:
                    f.write(normalize_ptx(result[side + "_ptx"]) + "\n")
    return 1 if counts["error"] or any(not r["sass"] for _, r in differ) else 0


if __name__ == "__main__":
    sys.exit(main())
