#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/) and
dictionaries. The results seeds are real runs, trimmed: CPU runs of the
given tilebench binary (run, replay, replay --frozen), a few GPU runs from
evidence/, and hand-written documents for what those lack.

    tests/fuzz/make_corpus.py build/src/tilebench [--out DIR]

Seeds are the committed copy; the fuzz script never writes into them. With --out,
the corpora and dictionaries go under DIR instead (a new or empty folder), and the
committed ones are left as they are."""
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUZZ = os.path.join(ROOT, "tests", "fuzz")  # the dictionaries' folder (main's --out moves it)
CORPUS = os.path.join(FUZZ, "corpus")


def compact(doc):
    return json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()


def trim(node, depth=0):
    """Short lists and strings keep every kind of field at a tenth of the size."""
    if isinstance(node, dict):
        return {k: trim(v, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [trim(v, depth + 1) for v in node[:3]]
    if isinstance(node, str) and len(node) > 160:
        return node[:160]
    return node


def trimmed_document(doc, case_filter=None, most=4):
    cases = [c for c in doc["cases"] if case_filter is None or case_filter(c)][:most]
    out = trim({k: v for k, v in doc.items() if k != "cases"})
    out["cases"] = [trim(c) for c in cases]
    if "replay" in doc:
        out["replay"] = trim(doc["replay"])
    return out


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return json.load(f)


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- results ---------------------------------------------------------------------


def cpu_runs(binary):
    work = tempfile.mkdtemp(prefix="tb-fuzz-seeds-")
    quick = ["--samples", "2", "--warmup-ms", "1", "--sample-ms", "1", "--quiet"]
    runs = {
        "cpu_run": ["run", "--ops", "sum,gemm", "--shapes", "3x5,4x4x4", *quick],
        "cpu_replay": ["replay", "--ops", "softmax", "--shapes", "3x5", "--rounds", "2", *quick],
    }
    docs = {}
    for name, argv in runs.items():
        out = os.path.join(work, name)
        subprocess.run([binary, *argv, "--out", out], check=True, stdout=subprocess.DEVNULL)
        docs[name] = load(os.path.join(out, "results.json"))
    frozen = os.path.join(work, "cpu_frozen")
    subprocess.run([binary, *runs["cpu_replay"], "--frozen", os.path.join(work, "cpu_replay"),
                    "--out", frozen], check=True, stdout=subprocess.DEVNULL)
    docs["cpu_frozen"] = load(os.path.join(frozen, "results.json"))
    shutil.rmtree(work)
    return docs


EVIDENCE = {
    # torch and torch.compile beside native, with device control and probe
    # (every batch mode; the seeds of earlier runs, 2026-11-29 torch-all and 2026-12-01
    # batch-modes/batch, are in history: evidence/INDEX.md)
    "gpu_torch": ("evidence/2026-12-01-h200-held-graphs/batch/37x769/results.json.gz",
                  lambda c: c["op"] in ("softmax", "gelu_add")),
    # gemm against cuBLAS and torch, realizations and precisions
    "gpu_gemm": ("evidence/2026-11-29-h200-final-5/gemm/run/results.json.gz",
                 lambda c: c["id"].startswith("gemm/127x193x61/packed") and c["id"].endswith("/tensor")),
    # gemm plans at small k (their per-operand load widths) and matrix-vector plans; the
    # streaming floor's seed of earlier (2026-11-29-h200-final-3/floor) is in history
    "gpu_small_k": ("evidence/2026-12-02-h200-gemm-small-k/call5/gemm/run/results.json.gz",
                    lambda c: c["id"].startswith("gemm/64x64x13/")),
    "gpu_gemv": ("evidence/2026-12-02-h200-matrix-vector-gemm/gemm/gemv-tiled/results.json", None),
}


def case(id_, op="sum", provider="native", **fields):
    c = {"id": id_, "op": op, "provider": provider, "valid": True, "m": 3, "n": 5}
    c.update(fields)
    return c


def samples(*ns):
    return {"per_call_ns": list(ns), "per_call_summary_ns": {"min": min(ns), "max": max(ns),
                                                             "p50": sorted(ns)[len(ns) // 2]}}


def document(cases, version=2, **top):
    doc = {"schema": "tilebench.results", "schema_version": version, "tool": {"version": "0.1.0"},
           "run": {"command": "tilebench run", "backend": "cpu", "valid_cases": len(cases)},
           "provenance": {"artifacts": [{"path": "src/tilebench", "role": "executable",
                                         "sha256": "0" * 64}]},
           "cases": cases}
    doc.update(top)
    return doc


def handwritten():
    host = {"throughput": samples(10.0, 12.0, 11.0), "latency": samples(20.0, 21.0)}
    device = {"control_complete": True,
              "throughput": {"control": samples(5.0, 6.0),
                             "probe": {"kernel_per_call_summary_ns": {"p50": 4.0}, "kernels": [2, 2]},
                             "probe_over_control_summary": {"median": 1.01, "min": 0.9, "max": 1.2}},
              "latency": {"control": samples(7.0, 8.0)},
              "flags": ["probe perturbation: median outside [0.95, 1.05]", "clock: drifted", 7]}
    hostile = "a|b\nc\r|" + "é" * 3 + "|" * 40
    replay = {"reference": "reference", "candidate": "candidate", "rounds": 2,
              "model_predicts_candidate_better": 1,
              "counts": {"gpu_throughput": {"cases": 1, "withheld": 0, "positive_median": 1}},
              "native_over_framework_counts": {"torch": 1},
              "cases": [{"case": "softmax/3x5|x", "model_predicts_candidate_better": None,
                         "metrics": {"gpu_throughput": {"median": 1.1, "min": 1.0, "max": 1.2,
                                                        "verdict": "candidate faster"},
                                     "host_latency": {"withheld": "a round lacks its pair"}},
                         "native_over_framework": {
                             "torch": {"automatic": {"gpu_throughput": {"withheld": "no GPU"}},
                                       "reference|x": {"gpu_throughput": {"median": 0.9}}}}}]}
    return {
        "minimal.json": document([]),
        "version1.json": document([case("sum/3x5/packed/native/automatic", host=host)], version=1),
        "shared_host.json": document([
            case("sum/3x5/packed/native/automatic", host=host, minimal_bytes=72.0),
            case("sum/3x5/packed/torch", provider="torch", host=host, minimal_bytes=72.0),
            case("sum/3x5/packed/native/automatic", round=1, host=host)]),
        "device_probe.json": document(
            [case("gemm/4x4x4/packed/native/tensor", op="gemm", k=4, realization="tensor",
                  precision="tf32", host=host, device=device, minimal_bytes=192.0,
                  validation={"max_abs_error": 1e-3, "max_rel_error": None, "atol": 2e-3},
                  provider_details={"buffers": {"state": "cold"}}),
             case("gemm/4x4x4/packed/cublas", op="gemm", provider="cublas", k=4,
                  realization="tensor", host=host, device=device),
             case("sum/3x5/packed/torch-compile", provider="torch-compile", backend="none",
                  valid=False, error="torch.compile needs torch 2.0")],
            run={"complete": False, "error": "interrupted", "copy_ceiling": {"gbps": 4190.1},
                 "valid_cases": 1},
            provenance={"git": {"commit": "abc", "dirty": True},
                        "host": {"os": "Linux", "cpu_model": "x", "logical_cpus": 2},
                        "busy_processes_start": {"threshold_cpu_percent": 5, "processes": [
                            {"name": "make|x", "pid": 7, "cpu_percent": 99.5}]},
                        "busy_processes_end": {"processes": []}}),
        "hostile_text.json": document([case(hostile, provider=hostile, error=hostile * 30,
                                            device_unavailable_reason=hostile,
                                            validation={"max_abs_error": "NaN"},
                                            device={"flags": [hostile * 3, ":", ""]})],
                                      run={"command": hostile, "backend": hostile}),
        "replay.json": document([case("softmax/3x5|x", op="softmax", round=0, host=host),
                                 case("softmax/3x5|x", op="softmax", round=1, host=host)],
                                replay=replay),
        "large_numbers.json": document([case("sum/0x0", m=0, n=0, k=0, host={
            "throughput": samples(1e300, 1e-300, 0.0), "latency": samples(-1.0)},
            minimal_bytes=1e308, device={"control_complete": True,
                                         "throughput": {"control": samples(0.0)}})],
                                       run={"valid_cases": 9223372036854775807, "seed": -1}),
    }


INVALID = {
    "bad_not_json.json": b"{\"schema\": \"tilebench.results\", ",
    "bad_schema.json": compact(document([], schema="other")),
    "bad_version.json": compact(document([], version=3)),
    "bad_duplicate_key.json": b'{"schema":"tilebench.results","schema":"x","schema_version":2}',
    "bad_case_id.json": compact(document([case("")])),
    "bad_case_size.json": compact(document([case("a", m=-1)])),
    "bad_artifacts.json": compact(document([], provenance={"artifacts": [{"path": 1}]})),
    "bad_cases_object.json": compact(document({})),
}


def results_seeds(binary):
    docs = {}
    if binary:
        for name, doc in cpu_runs(binary).items():
            docs[name + ".json"] = trimmed_document(doc)
    for name, (path, keep) in EVIDENCE.items():
        docs[name + ".json"] = trimmed_document(load(os.path.join(ROOT, path)), keep)
    docs.update(handwritten())
    for name, doc in docs.items():
        write("fuzz_results", name, compact(doc))
    for name, data in INVALID.items():
        write("fuzz_results", name, data)
    # one pretty-printed and one compressed file, as tilebench writes them
    write("fuzz_results", "indented.json", json.dumps(docs["shared_host.json"], indent=2))
    write("fuzz_results", "compressed.json.gz", gzip.compress(compact(docs["minimal.json"]), mtime=0))


# ---- worker replies -----------------------------------------------------------------

COMMANDS = ["hello", "prepare", "host_sample", "device_sample", "launch", "poison", "read_output",
            "release", "read_set_output", "check_guards"]

CONFIG = "PyTorch built with:\n  - GCC 13.3\n  - C++ Version: 201703\n  - OpenMP 201511"
RESULT = {"scope": 1, "kernels_capacity": 0, "kernels_written": 0, "gpu_elapsed_ns": 653280.0,
          "launches": 64, "kernels_seen": 64, "kernel_sum_ns": 327005.0, "kernel_span_ns": 0.0,
          "streams_seen": 1, "side_stream_kernels": 0, "timed_stream_id": 7,
          "clock_offset_begin_ns": 0.0, "clock_offset_end_ns": 0.0, "clock_drift_ns": -256.0,
          "calibration_width_ns": 0.0, "kernels_before_launch": 0, "begin_host_ns": 1,
          "end_host_ns": 2}
ZEROS = {k: 0 if isinstance(v, int) else 0.0 for k, v in RESULT.items()}

WORKER = {
    "hello_cuda": ("hello", 0, {"ok": True, "torch": "2.11.0+cu130", "cuda": True,
                                "cuda_version": "13.0", "cudnn": 91900, "device": "NVIDIA H200",
                                "threads": 16, "interop_threads": 16, "config": CONFIG,
                                "timing": True, "thread_env": {"OMP_NUM_THREADS": None}}),
    "hello_cpu": ("hello", 0, {"ok": True, "torch": "2.1.2", "cuda": False, "cuda_version": None,
                               "cudnn": None, "device": "cpu", "threads": 2, "interop_threads": 2,
                               "config": CONFIG, "timing": False, "thread_env": {}}),
    "hello_no_torch": ("hello", 0, {"ok": False, "error": "PyTorch is not importable in "
                                                          "/usr/bin/python3: No module named 'torch'"}),
    "prepare_out": ("prepare", 0, {"ok": True, "output_allocation": "preallocated_out",
                                   "implementation": "torch.sum(dim=-1, out=)", "compile_ms": None,
                                   "device": "cuda", "buffers": {
                                       "policy": "rotate buffer sets call by call", "sets": 2209,
                                       "bytes_per_set": 113960, "total_bytes": 251737640,
                                       "l2_bytes": 62914560, "state": "cold"}}),
    "prepare_compiled": ("prepare", 0, {"ok": True, "output_allocation": "framework_return_value",
                                        "implementation": "torch.softmax", "compile_ms": 1234.5,
                                        "device": "cpu", "buffers": None}),
    "prepare_failed": ("prepare", 0, {"ok": False, "error": "RuntimeError: torch.compile needs "
                                                            "torch 2.0 or newer (this is 1.13)"}),
    "launch": ("launch", 64, {"ok": True}),
    "poison": ("poison", 0, {"ok": True}),
    "release": ("release", 0, {"ok": True}),
    "read_output": ("read_output", 0, {"ok": True, "elements": 37}),
    "read_output_failed": ("read_output", 0, {"ok": False, "error": "RuntimeError: no output"}),
    "host_sample": ("host_sample", 100, {"ok": True, "elapsed_ns": 877407}),
    "read_set_output": ("read_set_output", 0, {"ok": True, "reached": True, "elements": 37}),
    "read_set_unreached": ("read_set_output", 0, {"ok": True, "reached": False, "elements": 0}),
    "guards_intact": ("check_guards", 0, {"ok": True, "buffers": 6, "intact": True,
                                          "damaged": None}),
    "guards_damaged": ("check_guards", 0, {"ok": True, "buffers": 6, "intact": False,
                                           "damaged": "after input x of buffer set 0: element "
                                                      "320, 0 past its end"}),
    "device_control": ("device_sample", 64, dict(ok=True, code=0, error="", **RESULT)),
    "device_probe": ("device_sample", 64, dict(ok=True, code=0, error="", **dict(RESULT, scope=2))),
    "device_failed": ("device_sample", 64, dict(ok=True, code=-13, error="TB_TIMING_E_CAPACITY: "
                                                "more kernels than the capacity", **ZEROS)),
    "device_no_timing": ("device_sample", 1, {"ok": True, "code": -4,
                                              "error": "no GPU timing in this worker"}),
}


def worker_seeds():
    for name, (cmd, calls, reply) in WORKER.items():
        prefix = bytes([ord("a") + COMMANDS.index(cmd)]) + calls.to_bytes(4, "little")
        write("fuzz_worker_reply", name, prefix + json.dumps(reply).encode())
    write("fuzz_worker_reply", "garbage", b"e\0\0\0\0this is not json")
    write("fuzz_worker_reply", "not_object", b"f\0\0\0\0[true]")


# ---- option values ----------------------------------------------------------------------

# parser letter (fuzz_options.c) -> values, typical and edge
OPTIONS = {
    "a": ["37x769", "1024x1024", "128x128x128", "1x1", "2147483648x1", "2147483649x1", "0x5",
          "3x5x", "x5", "3x5x7x9", "00037x0769", "18446744073709551616x2", " 3x5", "+3x5", "3X5"],
    "b": ["0", "18446744073709551615", "18446744073709551616", "007", "", "-1", "1e3", "0x10"],
    "c": ["2", "64", "65", "1"],
    "d": ["9223372036854775807", "9223372036854775808"],
    "e": ["100000", "0", "9"],
    "f": ["10", "0.5", "2e-3", "600000", "600000.0000001", ".5", "5.", "1e-301", "1e400", "inf",
          "nan", "1E+2", "0x1p3"],
    "g": ["1e308", "1.7976931348623157e308", "1.8e308", "4.9e-324"],
    "h": ["128,64,16", "1,2", "1", "1,2,3,4", ",,", "1,,2", "18446744073709551615,0"],
    "i": ["128,64,16", "4096,1,1", "4097,1,1", "0,1,1", "64,64", "128,128,32,"],
    "j": ["softmax,rmsnorm", "a,,b", "", "a,", ",a", "native,torch,torch-compile,cublas"],
    "k": ["sum", "softmax", "rmsnorm", "layernorm", "add", "gelu_add", "gemm", "Sum", "gemm "],
    "l": ["packed", "strided", "pack"],
    "m": ["reference", "candidate", "automatic"],
    "n": ["simt", "tensor", "tensor-3xtf32"],
    "o": ["analytic", "calibrated", "calibrated-2"],
    "p": ["native", "torch", "torch-compile", "cublas"],
    "q": ["sum,gemm,37x769,4x4x4,packed,strided,simt,tensor,reference,native"],
    "r": ["--op\nsoftmax\n--shape\n37x769",
          "--op\ngemm\n--shape\n128x128x128\n--matrix-realization\ntensor\n--gemm-block\n128,128,32\n--json",
          "--op\nsum\n--shape\n2147483648x2147483648\n--variant\nreference\n--profile\nanalytic\n--json",
          "--op\nlayernorm\n--shape\n8x65536\n--variant\ncandidate",
          "--op=rmsnorm\n--shape=16384x257\n--profile=calibrated",
          "--op\ngemm\n--shape\n2147483648x2147483648x2147483648\n--matrix-realization\ntensor-3xtf32",
          "--op\ngemm\n--shape\n127x193x61\n--gemm-block\n64,64,16\n--matrix-realization\nsimt",
          "--help", "-x", "--op\nadd\n--shape\n3x5"],
}


def option_seeds():
    for letter, values in OPTIONS.items():
        for i, value in enumerate(values):
            write("fuzz_options", f"{letter}{i:02d}", letter + value)


# ---- dictionaries -----------------------------------------------------------------------


def source_keys(*paths):
    """The object keys the C readers look up: their identifier-like string literals."""
    keys = set()
    for path in paths:
        with open(os.path.join(ROOT, path)) as f:
            keys |= set(re.findall(r'"([a-z][a-z0-9_]+)"', f.read()))
    return keys


def escape(ch):
    r"""libFuzzer's dictionary syntax: \\, \" and \xNN for the unprintable."""
    if ch in '\\"':
        return "\\" + ch
    return ch if " " <= ch <= "~" else "".join(f"\\x{b:02X}" for b in ch.encode())


def write_dict(name, tokens):
    lines = [f"# {name}: tokens for libFuzzer's -dict (tests/fuzz/make_corpus.py)"]
    lines += ['"' + "".join(escape(ch) for ch in t) + '"' for t in sorted(set(tokens))]
    with open(os.path.join(FUZZ, name), "w") as f:
        f.write("\n".join(lines) + "\n")


JSON_TOKENS = ["{", "}", "[", "]", ":", ",", "true", "false", "null", "-1", "0", "1e308", "0.5",
               '""', "\\u00e9"]


# ---- launch descriptions (--launch) ----------------------------------------------

LAUNCH_SEEDS = ["grid=m,block=256,smem=0", "grid=cdiv(m,4),2,block=32,4,smem=(n+3)*4",
                "block=n/2,grid=m*(1+n)/n", "grid=m-m,block=1", "grid=m,block=1025",
                "grid=cdiv(m,0),block=1", "grid=9223372036854775807+m,block=1",
                "grid=((((m)))),block=32,32", "grid=m,blok=1", "grid=2m,block=1",
                "grid=m,block=1,1,65", "grid=m/(n-n),block=1", " grid = m , block = n ",
                "grid=m,block=256,grid=1"]


def launch_seeds():
    """Shape 38x769 (bytes 0-3: m-1, n-1, 16 bits each), then the description."""
    for i, text in enumerate(LAUNCH_SEEDS):
        write("fuzz_launch_spec", f"s{i:02d}", b"\x25\x00\x00\x03" + text.encode())


def dictionaries():
    readers = ["src/results/load.c", "src/results/model.c", "src/cli/cmd_compare.c"]
    readers += sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "src/report/*.c")))
    result_keys = {k for k in source_keys(*readers) if len(k) > 1}
    write_dict("results.dict", JSON_TOKENS + ["tilebench.results", "none", "torch", "native"] +
               [f'"{k}"' for k in result_keys])
    reply_keys = source_keys("src/providers/worker_reply.c", "src/providers/torch_worker.c")
    write_dict("worker_reply.dict", JSON_TOKENS + ["preallocated_out", "framework_return_value"] +
               [f'"{k}"' for k in reply_keys if len(k) > 1])
    names = ["x", ",", "\n", "--op", "--shape", "--variant", "--profile", "--json", "--help",
             "--matrix-realization", "--gemm-block", "=", "2147483648", "18446744073709551615",
             "e-", "E+", "."]
    write_dict("options.dict", names + [v for k in "klmnop" for v in OPTIONS[k]])
    write_dict("launch_spec.dict", ["grid=", "block=", "smem=", "cdiv(", "m", "n", ",", "(", ")",
                                    "+", "-", "*", "/", "1024", "65535", "2147483648",
                                    "9223372036854775807", " "])


def main():
    global FUZZ, CORPUS
    import argparse
    parser = argparse.ArgumentParser(description="Writes the fuzz targets' seed corpora and dictionaries.")
    parser.add_argument("binary", nargs="?", help="the tilebench executable (CPU seeds)")
    parser.add_argument("--out", help="a new or empty folder for the corpora and dictionaries")
    args = parser.parse_args()
    if args.out is not None:
        if os.path.exists(args.out) and (not os.path.isdir(args.out) or os.listdir(args.out)):
            print("make_corpus.py: --out needs a new or empty folder", file=sys.stderr)
            return 2
        FUZZ = args.out
        CORPUS = os.path.join(FUZZ, "corpus")
    binary = args.binary
    if os.path.isdir(CORPUS):
        shutil.rmtree(CORPUS)
    results_seeds(binary)
    worker_seeds()
    option_seeds()
    launch_seeds()
    dictionaries()
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(CORPUS) for f in fs)
    print(f"corpus: {total} bytes under {CORPUS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
