#!/usr/bin/env python3
"""Independent audit of tilebench results (docs/method.md §6).

Re-derives every published figure from the raw samples and the case alone,
with code of its own (it shares nothing with the C statistics or planner):
case ids, sample counts and per-call values, p50/min/max, paired
probe/control ratios, order alternation, validation and validity, every
planner fact and pick, generated sources' hashes and properties, replay
balance, gains, verdicts and counts (and from schema 4 each range's interval,
noise, band and decision, and the per-call scope), and the identity of the
environments of the runs it is given. Stops at the first problem with a
message naming the file, case and field. A run that stopped early
(run.complete false) is audited as far as it got and labelled INCOMPLETE.

It reads only regular files, and boundedly: a results file (results.json,
or results.json.gz where committed evidence stores it compressed) of at most
512 MiB decompressed, archived sources of at most 4 MiB, looked up in the
run's sources/ and then in the sources/ of each directory above it, and,
with --check-current-artifacts, artifacts of at most 4 GiB hashed in chunks.

usage: tilebench_audit.py DIR... [--receipt FILE] [--check-current-artifacts]
exit status:
  0  every check passed (INCOMPLETE runs say so on their own line)
  1  DISCREPANCY: a recorded figure does not re-derive
  2  bad usage: bad arguments, a missing run directory or results file,
     an existing receipt
  3  MALFORMED: not a well-formed tilebench results file, record or run
     directory (unreadable, not a regular file, too large, not JSON, a
     missing or mistyped field, a value outside its domain)
"""
import argparse
import gzip
import hashlib
import json
import math
import os
import re
import reprlib
import stat
import sys
import zlib

AUDIT_VERSION = "2"
# docs/results-schema.md: 2 adds validation.max_abs_reference; 3 the device
# throughput's batch modes (graph, held), scope_order and gap_free
# 7: per-sample clock checks (device.clock_warmup, *.clock_checks), host.cpu_frequency;
# 8: the defences timed_outputs and plausible and the recorded tolerance scale (shards,
# merges and subwarp rows, optional fields, from either); 9: every device control sample's
# host_elapsed_ns, and the throughput controls held within it
SCHEMA_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9)

EXIT_PASSED, EXIT_DISCREPANCY, EXIT_USAGE, EXIT_MALFORMED = 0, 1, 2, 3


class Discrepancy(Exception):
    """A recorded figure that does not re-derive."""


class Malformed(Exception):
    """Input that is not a well-formed tilebench results file, record or run directory."""


def _message_repr():
    """reprlib, to bound a message's repr however large or deep the value: a record may
    hold megabytes in one field, or lists nested a thousand deep."""
    r = reprlib.Repr()
    r.maxlevel, r.maxdict, r.maxlist, r.maxtuple = 4, 12, 12, 12
    r.maxstring, r.maxother, r.maxlong = 200, 200, 80
    return r


MESSAGE_REPR = _message_repr()


def short(value, limit=200):
    """repr of a value for a message, cut short."""
    text = MESSAGE_REPR.repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def is_number(x):
    """A JSON number: bool is an int in Python, never a number in a record."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def agrees(recorded, expected, rel):
    """Whether a recorded value is the re-derived one: numbers within rel, a non-finite
    figure only as the null that the C writer puts in its place, anything else equal
    (and a bool never standing in for a number, nor a number for a bool)."""
    if isinstance(expected, float) and not math.isfinite(expected):
        return recorded is None
    if is_number(expected) and is_number(recorded) and (
            isinstance(expected, float) or isinstance(recorded, float)):
        try:
            return math.isclose(recorded, expected, rel_tol=rel, abs_tol=1e-12)
        except OverflowError:  # an int too large for a float is no figure of a run
            return False
    if isinstance(recorded, bool) != isinstance(expected, bool):
        return False
    return recorded == expected


class Audit:
    def __init__(self):
        self.checks = 0
        self.where = ""

    def fail(self, field, message):
        raise Discrepancy(f"{self.where}: {field}: {message}")

    def malformed(self, field, message):
        raise Malformed(f"{self.where}: {field}: {message}")

    def same(self, field, recorded, expected, rel=1e-9):
        """The value in the record must equal the one re-derived (numbers within rel)."""
        self.checks += 1
        if not agrees(recorded, expected, rel):
            self.fail(field, f"recorded {short(recorded)}, re-derived {short(expected)}")


def median(values):
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return None
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


# ---- structure: what the audit reads is there, with its type and domain -------------
#
# Checked before a record is audited, so that a record the C side cannot have written
# is reported as MALFORMED, naming the field, instead of failing somewhere in the
# arithmetic; the re-derivations below may then rely on the types checked here.

SHA256 = re.compile(r"[0-9a-f]{64}")
LARGEST_SIZE = 2 ** 63 - 1  # a size_t as the C side writes it: a JSON integer of jansson's


def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _finite(x):
    """A number the C side can write: a finite double, or an integer of jansson's 64 bits
    (a longer one would overflow the float arithmetic of the re-derivations)."""
    if _int(x):
        return -LARGEST_SIZE - 1 <= x <= LARGEST_SIZE
    return isinstance(x, float) and math.isfinite(x)


KINDS = {  # name: (test, how a message says it)
    "null": (lambda x: x is None, "null"),
    "bool": (lambda x: isinstance(x, bool), "true or false"),
    "str": (lambda x: isinstance(x, str), "a string"),
    "object": (lambda x: isinstance(x, dict), "an object"),
    "list": (lambda x: isinstance(x, list), "a list"),
    "int": (_int, "a whole number"),
    "count": (lambda x: _int(x) and 0 <= x <= LARGEST_SIZE, "a whole number >= 0"),
    "positive": (lambda x: _int(x) and 1 <= x <= LARGEST_SIZE, "a whole number >= 1"),
    "number": (_finite, "a finite number"),
    "nonnegative": (lambda x: _finite(x) and x >= 0, "a finite number >= 0"),
    "sha256": (lambda x: isinstance(x, str) and SHA256.fullmatch(x) is not None,
               "64 lower-case hex digits"),
}

OPS = ("sum", "softmax", "rmsnorm", "layernorm", "add", "gelu_add", "gemm")
VIEWS = ("packed", "strided")
VARIANTS = ("reference", "candidate", "automatic")
# A fixed register-rows candidate named sSpP (docs/planner.md): S warps a row, P rows a
# block, S and P 1..32 without leading zeros. (1, 8) and (2, 4) are named reference and
# candidate, never s1p8 or s2p4 (src/cases/case_params.c writes one name per plan).
FIXED_VARIANT = re.compile(r"s([1-9][0-9]?)p([1-9][0-9]?)")
NAMED_FIXED = {"reference": (1, 8), "candidate": (2, 4)}


def fixed_shape(variant):
    """(s, p) of reference, candidate or a well-formed sSpP; None for anything else."""
    if variant in NAMED_FIXED:
        return NAMED_FIXED[variant]
    match = FIXED_VARIANT.fullmatch(variant) if isinstance(variant, str) else None
    if match is None:
        return None
    s, p = int(match.group(1)), int(match.group(2))
    if not (1 <= s <= 32 and 1 <= p <= 32) or (s, p) in NAMED_FIXED.values():
        return None
    return s, p


def one_variant(a, value, field):
    """A planner variant's name: reference, candidate, automatic or sSpP."""
    if value != "automatic" and fixed_shape(value) is None:
        a.malformed(field, f"{short(value, 80)} is none of {', '.join(VARIANTS)} nor sSpP "
                    "(S, P 1..32; s1p8 is reference, s2p4 candidate)")
    return value
PLAN_KINDS = ("row_reduction", "gemm", "elementwise")


def check(a, value, kinds, field):
    """value must be of one of the kinds ("number|null"); a malformed record otherwise."""
    names = kinds.split("|")
    if not any(KINDS[k][0](value) for k in names):
        wanted = " or ".join(KINDS[k][1] for k in names)
        a.malformed(field, f"{short(value, 80)} where {wanted} belongs")
    return value


def member(a, obj, path, key, kinds, optional=False):
    """obj[key] (obj at `path` in the record), of one of the kinds; an absent key is
    malformed unless optional (then None)."""
    field = f"{path}.{key}" if path else key
    if key not in obj:
        if optional:
            return None
        a.malformed(field, "missing")
    return check(a, obj[key], kinds, field)


def items(a, values, kinds, field):
    """Every entry of a list of one of the kinds."""
    for i, value in enumerate(values):
        check(a, value, kinds, f"{field}[{i}]")
    return values


def one_of(a, value, allowed, field):
    if value not in allowed:
        a.malformed(field, f"{short(value, 80)} is none of {', '.join(allowed)}")
    return value


def check_document(a, doc):
    """The top of a results file: what every run-level step reads. Cases are checked
    one by one (check_case) as they are audited, so the message names the case."""
    check(a, doc, "object", "the document")
    if doc.get("schema") != "tilebench.results":
        a.malformed("schema", f"{short(doc.get('schema'), 80)}: not a tilebench results file")
    version = doc.get("schema_version")
    if not _int(version) or version not in SCHEMA_VERSIONS:
        a.malformed("schema_version", f"{short(version, 80)}: the audit reads versions "
                    + " and ".join(map(str, SCHEMA_VERSIONS)))
    check_run(a, member(a, doc, "", "run", "object"), version)
    check_provenance(a, member(a, doc, "", "provenance", "object"))
    items(a, member(a, doc, "", "cases", "list"), "object", "cases")
    replay = member(a, doc, "", "replay", "object", optional=True)
    if replay is not None:
        if "replay" not in doc["run"]:
            a.malformed("replay", "a replay summary in a run that is not a replay (no run.replay)")
        check_replay_summary(a, replay)


# --tolerance-scale (docs/tolerances.md): at least 1 (it only widens), at most this
MAX_TOLERANCE_SCALE = 1e6


def check_run(a, run, version):
    member(a, member(a, run, "run", "measure", "object"), "run.measure", "samples", "positive")
    # version 8 records the run's tolerance scale; a scale below 1 would narrow the
    # documented tolerances, which tilebench refuses: no record of it holds one
    scale = member(a, run, "run", "tolerance_scale", "number", optional=version < 8)
    if scale is not None and not 1 <= scale <= MAX_TOLERANCE_SCALE:
        a.malformed("run.tolerance_scale", f"{short(scale, 80)} is outside [1, "
                    f"{MAX_TOLERANCE_SCALE:g}]: the scale only widens docs/tolerances.md")
    member(a, run, "run", "valid_cases", "count")
    member(a, run, "run", "complete", "bool")
    member(a, run, "run", "error", "str|null")
    member(a, run, "run", "planner_profile", "str", optional=True)
    interrupted = member(a, run, "run", "interrupted", "object|null", optional=True)
    if interrupted is not None:
        one_of(a, member(a, interrupted, "run.interrupted", "signal", "str"), ("SIGINT", "SIGTERM"),
               "run.interrupted.signal")
        items(a, member(a, interrupted, "run.interrupted", "missing_cases", "list"), "str",
              "run.interrupted.missing_cases")
    shard = member(a, run, "run", "shard", "object", optional=True)
    if shard is not None:
        check_shard_record(a, shard, "run.shard")
        member(a, shard, "run.shard", "index", "count")
    merge = member(a, run, "run", "merge", "object", optional=True)
    if merge is not None:
        if shard is not None:
            a.malformed("run.merge", "a merged run is no shard (it has run.shard too)")
        check_shard_record(a, merge, "run.merge", count_key="shard_count")
        for i, entry in enumerate(items(a, member(a, merge, "run.merge", "shards", "list"), "object",
                                        "run.merge.shards")):
            field = f"run.merge.shards[{i}]"
            member(a, entry, field, "index", "count")
            member(a, entry, field, "file", "str")
            member(a, entry, field, "results_sha256", "sha256")
            member(a, entry, field, "valid_cases", "count")
            member(a, entry, field, "measured_on", "object")
    replay = member(a, run, "run", "replay", "object", optional=True)
    if replay is not None:
        member(a, replay, "run.replay", "rounds", "positive")
        member(a, replay, "run.replay", "reference", "str")
        member(a, replay, "run.replay", "candidate", "str")
        orders = member(a, replay, "run.replay", "variant_order", "list")
        for i, order in enumerate(items(a, orders, "list", "run.replay.variant_order")):
            items(a, order, "str", f"run.replay.variant_order[{i}]")


def check_shard_record(a, record, field, count_key="count"):
    """run.shard or run.merge: the campaign's units and how they were dealt."""
    count = member(a, record, field, count_key, "positive")
    items(a, member(a, record, field, "campaign_argv", "list"), "str", f"{field}.campaign_argv")
    member(a, record, field, "campaign_sha256", "sha256")
    units = member(a, record, field, "units", "list")
    for i, unit in enumerate(items(a, units, "object", f"{field}.units")):
        at = f"{field}.units[{i}]"
        member(a, unit, at, "key", "str")
        member(a, unit, at, "cost", "count")
        if member(a, unit, at, "shard", "count") >= count:
            a.malformed(f"{at}.shard", f"{unit['shard']} is not below the {count} shards")
        items(a, member(a, unit, at, "records", "list"), "str", f"{at}.records")


def check_replay_summary(a, replay):
    """The replay summary's structure; its values are re-derived in audit_replay."""
    member(a, replay, "replay", "rounds", "int")
    member(a, replay, "replay", "reference", "str")
    member(a, replay, "replay", "candidate", "str")
    member(a, replay, "replay", "model_predicts_candidate_better", "count")
    counts = member(a, replay, "replay", "counts", "object")
    for metric in METRICS:
        member(a, counts, "replay.counts", metric, "object")
    member(a, replay, "replay", "native_over_framework_counts", "object", optional=True)
    entries = member(a, replay, "replay", "cases", "list")
    for i, entry in enumerate(items(a, entries, "object", "replay.cases")):
        field = f"replay.cases[{i}]"
        member(a, entry, field, "case", "str")
        member(a, entry, field, "model_predicts_candidate_better", "bool|null")
        metrics = member(a, entry, field, "metrics", "object")
        for metric in METRICS:
            check_pairs(a, member(a, metrics, f"{field}.metrics", metric, "object"),
                        f"{field}.metrics.{metric}", ("reference_p50_ns", "candidate_p50_ns", "gain"))
        versus = member(a, entry, field, "native_over_framework", "object", optional=True) or {}
        for provider, variants in versus.items():
            path = f"{field}.native_over_framework.{printable(provider)}"
            for variant, metrics in check(a, variants, "object", path).items():
                at = f"{path}.{printable(variant)}"
                for metric, rec in check(a, metrics, "object", at).items():
                    at_metric = f"{at}.{printable(metric)}"
                    check_pairs(a, check(a, rec, "object", at_metric), at_metric, ("ratio",))


def check_pairs(a, rec, field, lists):
    """A metric's figures over the rounds: lists of numbers (null where absent), the reason
    they are withheld (whether they should be is re-derived) and their summary."""
    for key in lists:
        items(a, member(a, rec, field, key, "list"), "number|null", f"{field}.{key}")
    member(a, rec, field, "withheld", "str|null")
    for key in ("median", "min", "max"):
        member(a, rec, field, key, "number|null", optional=True)
    member(a, rec, field, "verdict", "str", optional=True)
    # schema 4: the interval of the median ratio and its decision (audit_replay_interval)
    interval = member(a, rec, field, "interval", "object", optional=True)
    if interval is not None:
        for key in ("lo", "hi", "coverage"):
            member(a, interval, f"{field}.interval", key, "number|null")
        member(a, interval, f"{field}.interval", "rank", "count")
        noise = member(a, rec, field, "noise", "object")
        for key in ("first", "second"):
            member(a, noise, f"{field}.noise", key, "number|null")
        member(a, rec, field, "band", "number")
        member(a, rec, field, "decision", "str")


def check_provenance(a, prov):
    host = member(a, prov, "provenance", "host", "object")
    for key in ("os", "cpu_model"):
        member(a, host, "provenance.host", key, "str|null", optional=True)
    gpu = member(a, prov, "provenance", "gpu", "object|null", optional=True)
    if gpu is not None:
        devices = member(a, gpu, "provenance.gpu", "devices", "list", optional=True) or []
        for i, device in enumerate(items(a, devices, "object", "provenance.gpu.devices")):
            for key in ("name", "compute_capability", "uuid"):
                member(a, device, f"provenance.gpu.devices[{i}]", key, "str|null", optional=True)
    artifacts = member(a, prov, "provenance", "artifacts", "list")
    for i, art in enumerate(items(a, artifacts, "object", "provenance.artifacts")):
        field = f"provenance.artifacts[{i}]"
        member(a, art, field, "path", "str")
        member(a, art, field, "role", "str")
        member(a, art, field, "sha256", "sha256|null")  # null: the file could not be read


def check_case(a, case, version, rounds):
    """A case's own fields (the id is checked by the caller, before it names the case)."""
    op = one_of(a, member(a, case, "", "op", "str"), OPS, "op")
    member(a, case, "", "m", "positive")
    member(a, case, "", "n", "positive")
    # gemm shapes are MxNxK, the others' MxN: the C side writes k for gemm only
    member(a, case, "", "k", "positive", optional=op != "gemm")
    if op != "gemm" and "k" in case:
        a.malformed("k", "only gemm cases have a k")
    member(a, case, "", "provider", "str")
    member(a, case, "", "backend", "str")
    variant = member(a, case, "", "variant", "str|null")
    if variant is not None:
        one_variant(a, variant, "variant")
    if op == "gemm":
        one_of(a, member(a, case, "", "realization", "str"), tuple(GEMM_PRECISION), "realization")
        member(a, case, "", "precision", "str")
    one_of(a, member(a, member(a, case, "", "input_view", "object"), "input_view", "kind", "str"),
           VIEWS, "input_view.kind")
    member(a, case, "", "valid", "bool")
    member(a, case, "", "error", "str|null")
    member(a, case, "", "source_sha256", "sha256|null", optional=True)  # a file name: no paths
    member(a, case, "", "provider_position", "count|null", optional=True)
    member(a, case, "", "shard", "count", optional=True)  # merged runs (v7)
    member(a, case, "", "measured_on", "object", optional=True)
    details = member(a, case, "", "provider_details", "object|null", optional=True) or {}
    member(a, details, "provider_details", "cublas", "object", optional=True)
    member(a, details, "provider_details", "implementation", "str|null", optional=True)
    if case.get("provider") == "user" and case.get("provider_details") is not None:
        check_user_library(a, details)
    if case.get("provider") == "user-python" and case.get("provider_details") is not None:
        check_user_callable(a, details)
    if rounds is None and "round" in case:
        a.malformed("round", "a case of a run that is not a replay has no round")
    if rounds is not None and member(a, case, "", "round", "count") >= rounds:
        a.malformed("round", f"{case['round']} is not below the replay's {rounds} rounds")
    host = member(a, case, "", "host", "object|null")
    if host is not None:
        for metric in ("throughput", "latency"):
            check_phase(a, member(a, host, "host", metric, "object"), f"host.{metric}")
        # version 6 records how the host throughput samples stopped (method §2.6)
        stopping = member(a, host, "host", "stopping", "object", optional=version < 6)
        if stopping is not None:
            check_stopping(a, stopping, "host.stopping")
    device = member(a, case, "", "device", "object|null")
    if device is not None:
        check_device(a, device)
    validation = member(a, case, "", "validation", "object|null")
    if validation is not None:
        check_validation(a, validation, version)
    # version 5 records the defences of method §8 on every case
    defences = member(a, case, "", "defences", "object|null", optional=version < 5)
    if defences is not None:
        check_defences(a, defences, version)
    plans = member(a, case, "", "execution_plans", "list")
    for i, record in enumerate(items(a, plans, "object", "execution_plans")):
        check_plan(a, record, f"execution_plans[{i}]")


STOP_REASONS = {"fixed": ("fixed_count",), "noise": ("converged", "max_samples", "timeout")}
NOISE_PARAMETERS = (("max_noise", "number"), ("min_samples", "positive"),
                    ("max_samples", "positive"), ("min_time_s", "nonnegative"),
                    ("timeout_s", "number"))


def check_stopping(a, stopping, field):
    """A stopping record (a phase's, or the run's rule when it has no outcome)."""
    rule = one_of(a, member(a, stopping, field, "rule", "str"), tuple(STOP_REASONS), f"{field}.rule")
    if rule == "fixed":
        member(a, stopping, field, "samples", "positive")
    else:
        for key, kind in NOISE_PARAMETERS:
            member(a, stopping, field, key, kind)
    if field == "run.measure.stopping":
        return
    member(a, stopping, field, "samples_taken", "positive")
    member(a, stopping, field, "noise", "number|null")
    one_of(a, member(a, stopping, field, "reason", "str"), STOP_REASONS[rule], f"{field}.reason")
    member(a, stopping, field, "sampled_s", "nonnegative")
    member(a, stopping, field, "wall_s", "nonnegative")
    items(a, member(a, stopping, field, "flags", "list"), "str", f"{field}.flags")


def check_user_library(a, details):
    """docs/user-kernels.md: which file ran, by its resolved path and digest."""
    library = member(a, details, "provider_details", "library", "str")
    member(a, details, "provider_details", "sha256", "sha256")
    member(a, details, "provider_details", "symbol", "str")
    member(a, details, "provider_details", "abi_version", "positive")
    for key in ("abi_declared", "accepts_strided_rows"):
        member(a, details, "provider_details", key, "bool")
    name = member(a, details, "provider_details", "file_name", "str")
    if not library.startswith("/") or library.rsplit("/", 1)[-1][:255] != name:
        a.malformed("provider_details.file_name", "the last component of an absolute library path")


def check_user_callable(a, details):
    """docs/user-kernels.md, a Python callable: the worker's facts as for
    torch, and which file ran, by its resolved path and digest, and what in it."""
    path = member(a, details, "provider_details", "module_path", "str")
    member(a, details, "provider_details", "sha256", "sha256")
    for key in ("function", "qualname"):
        if not member(a, details, "provider_details", key, "str"):
            a.malformed(f"provider_details.{key}", "empty")
    name = member(a, details, "provider_details", "file_name", "str")
    if not path.startswith("/") or path.rsplit("/", 1)[-1][:255] != name:
        a.malformed("provider_details.file_name", "the last component of an absolute module path")
    member(a, details, "provider_details", "worker", "object|null")


DEFENCES_V5 = ("inputs_unchanged", "guard_zones", "every_call", "fresh_inputs",
               "launches_on_stream")
# version 8: the outputs of the timed calls, and the plausibility gate
DEFENCES = DEFENCES_V5 + ("timed_outputs", "plausible")
FIGURE_SCOPES = ("host", "eager", "graph", "held")


def schema8_defences(defences, version):
    """Whether a defences record carries version 8's two: required from 8, audited
    wherever present."""
    return version >= 8 or "timed_outputs" in defences or "plausible" in defences


def check_defences(a, defences, version):
    """docs/method.md §8: one record per defence, each passed, failed or not run; the
    facts of timed_outputs and plausible (version 8) where they ran."""
    names = DEFENCES if schema8_defences(defences, version) else DEFENCES_V5
    for name in names:
        record = member(a, defences, "defences", name, "object")
        one_of(a, member(a, record, f"defences.{name}", "outcome", "str"),
               ("passed", "failed", "not_run"), f"defences.{name}.outcome")
        member(a, record, f"defences.{name}", "detail", "str")
    for name in defences:
        one_of(a, name, names, "defences (key)")
    if names is DEFENCES_V5:
        return
    timed = defences["timed_outputs"]
    if timed["outcome"] != "not_run":
        field = "defences.timed_outputs"
        member(a, timed, field, "sets", "positive")
        member(a, timed, field, "sets_checked", "positive")
        member(a, timed, field, "decoy_before_batches", "bool")
        member(a, timed, field, "failed_set", "count|null")
        check_validation(a, member(a, timed, field, "validation", "object"), version,
                         f"{field}.validation")
    gate = defences["plausible"]
    if gate["outcome"] != "not_run":
        field = "defences.plausible"
        member(a, gate, field, "bytes_model", "str")
        for i, figure in enumerate(items(a, member(a, gate, field, "figures", "list"), "object",
                                         f"{field}.figures")):
            at = f"{field}.figures[{i}]"
            one_of(a, member(a, figure, at, "scope", "str"), FIGURE_SCOPES, f"{at}.scope")
            member(a, figure, at, "per_call_p50_ns", "number")
            member(a, figure, at, "gbps", "number")
            member(a, figure, at, "gflops", "number|null")
        for key in ("margin", "flop_margin"):
            member(a, gate, field, key, "number")
        source = member(a, gate, field, "ceiling_source", "str|null")
        if source is not None:
            one_of(a, source, ("device_copy", "host_copy"), f"{field}.ceiling_source")
        member(a, gate, field, "ceiling_gbps", "number|null")
        copies = member(a, gate, field, "host_copies", "list", optional=True) or []
        for i, copy in enumerate(items(a, copies, "object", f"{field}.host_copies")):
            at = f"{field}.host_copies[{i}]"
            member(a, copy, at, "footprint_bytes", "number")
            member(a, copy, at, "bytes_copied", "positive")
            member(a, copy, at, "calls_per_sample", "positive")
            items(a, member(a, copy, at, "elapsed_ns", "list"), "nonnegative", f"{at}.elapsed_ns")
            member(a, copy, at, "gbps", "number|null")
        member(a, gate, field, "cpus", "positive", optional=not copies)
        member(a, gate, field, "peak_gflops", "number|null")
        member(a, gate, field, "peak_basis", "str|null")
        member(a, gate, field, "worker_clock", "bool")


def check_probe_counts(a, probe, name):
    """The probe's per-sample kernel counts launches_on_stream is re-derived from."""
    items(a, member(a, probe, name, "side_stream_kernels", "list"), "count",
          f"{name}.side_stream_kernels")


def check_phase(a, phase, name):
    member(a, phase, name, "calls_per_sample", "positive")
    elapsed = items(a, member(a, phase, name, "elapsed_ns", "list"), "nonnegative",
                    f"{name}.elapsed_ns")
    # version 8: a worker's host samples carry the harness's clock around each request
    harness = member(a, phase, name, "harness_elapsed_ns", "list", optional=True)
    if harness is not None:
        items(a, harness, "count", f"{name}.harness_elapsed_ns")
        if len(harness) != len(elapsed):
            a.malformed(f"{name}.harness_elapsed_ns", "one entry a sample")
    # version 9: a device control sample carries the host's time around it
    around = member(a, phase, name, "host_elapsed_ns", "list", optional=True)
    if around is not None:
        items(a, around, "nonnegative|null", f"{name}.host_elapsed_ns")
        if len(around) != len(elapsed):
            a.malformed(f"{name}.host_elapsed_ns", "one entry a sample")
    items(a, member(a, phase, name, "per_call_ns", "list"), "number|null", f"{name}.per_call_ns")
    summary = member(a, phase, name, "per_call_summary_ns", "object")
    for key in ("p50", "min", "max"):
        member(a, summary, f"{name}.per_call_summary_ns", key, "number|null")


def check_device(a, device):
    member(a, device, "device", "control_complete", "bool")
    member(a, device, "device", "probe_samples_without_kernels", "count", optional=True)
    for metric in ("throughput", "latency"):
        name = f"device.{metric}"
        m = member(a, device, "device", metric, "object")
        check_phase(a, member(a, m, name, "control", "object"), f"{name}.control")
        items(a, member(a, m, name, "order", "list"), "str", f"{name}.order")
        probe = member(a, m, name, "probe", "object|null")
        if probe is not None:
            check_phase(a, probe, f"{name}.probe")
            check_probe_counts(a, probe, f"{name}.probe")
            items(a, member(a, probe, f"{name}.probe", "kernel_sum_ns", "list"), "nonnegative",
                  f"{name}.probe.kernel_sum_ns")
            kernel = member(a, probe, f"{name}.probe", "kernel_per_call_summary_ns", "object")
            member(a, kernel, f"{name}.probe.kernel_per_call_summary_ns", "p50", "number|null")
        items(a, member(a, m, name, "probe_over_control", "list"), "number|null",
              f"{name}.probe_over_control")
        summary = member(a, m, name, "probe_over_control_summary", "object")
        for key in ("median", "min", "max"):
            member(a, summary, f"{name}.probe_over_control_summary", key, "number|null")
        member(a, summary, f"{name}.probe_over_control_summary", "pairs", "count")
    throughput = device["throughput"]
    if "batch_modes" in throughput:
        check_batch_modes(a, throughput)


def check_ratios(a, record, name, field):
    items(a, member(a, record, name, field, "list"), "number|null", f"{name}.{field}")
    summary = member(a, record, name, f"{field}_summary", "object")
    for key in ("median", "min", "max"):
        member(a, summary, f"{name}.{field}_summary", key, "number|null")
    member(a, summary, f"{name}.{field}_summary", "pairs", "count")


def check_batch_modes(a, m):
    name = "device.throughput"
    items(a, member(a, m, name, "scope_order", "list"), "str", f"{name}.scope_order")
    modes = member(a, m, name, "batch_modes", "object")
    for mode, record in modes.items():
        where = f"{name}.batch_modes.{mode}"
        if mode not in ("graph", "held") or not isinstance(record, dict):
            a.malformed(where, "a batch mode is graph or held, an object")
        for scope in ("control", "probe"):
            phase = member(a, record, where, scope, "object|null")
            if phase is not None:
                check_phase(a, phase, f"{where}.{scope}")
            if phase is not None and scope == "probe":
                check_probe_counts(a, phase, f"{where}.probe")
        check_ratios(a, record, where, "probe_over_control")
        check_ratios(a, record, where, "over_eager_control")
        if "unavailable" in record:
            member(a, record, where, "unavailable", "str")
    gap_free = member(a, m, name, "gap_free", "object|null") if "gap_free" in m else None
    if gap_free is not None:
        member(a, gap_free, f"{name}.gap_free", "mode", "str")
        member(a, gap_free, f"{name}.gap_free", "per_call_p50_ns", "number|null")


def check_validation(a, v, version, name="validation"):
    member(a, v, name, "passed", "bool")
    for key in ("atol", "rtol"):
        member(a, v, name, key, "nonnegative")
    for key in ("max_abs_error", "max_rel_error"):  # null: made infinite by a non-finite output
        member(a, v, name, key, "nonnegative|null")
    if version >= 2:
        member(a, v, name, "max_abs_reference", "nonnegative|null")
    member(a, v, name, "tolerance_scale", "number", optional=version < 8)
    for key in ("checked_elements", "failed_elements", "unwritten_elements"):
        member(a, v, name, key, "count")
    member(a, v, name, "non_finite_errors", "bool")
    first = member(a, v, name, "first_failure", "object", optional=True)
    if first is not None:
        member(a, first, f"{name}.first_failure", "index", "count")
        member(a, first, f"{name}.first_failure", "got", "number|null")
        member(a, first, f"{name}.first_failure", "expected", "number|null")


def check_plan(a, record, field):
    """The inputs each plan is re-derived from (their outputs are compared field by field)."""
    kind = one_of(a, member(a, record, field, "kind", "str"), PLAN_KINDS, f"{field}.kind")
    member(a, record, field, "m", "positive")
    member(a, record, field, "n", "positive")
    if kind == "elementwise":
        member(a, record, field, "flat", "bool", optional=True)
        member(a, record, field, "scalar_max_elements", "positive", optional=True)
        member(a, record, field, "groups_per_thread", "positive", optional=True)
        for key in ("elements_per_thread", "threads_per_block", "threads_per_row", "thread_blocks"):
            member(a, record, field, key, "positive")
    elif kind == "gemm":
        member(a, record, field, "k", "positive")
        one_of(a, member(a, record, field, "realization", "str"), tuple(GEMM_PRECISION),
               f"{field}.realization")
        member(a, record, field, "multiprocessors", "positive")
        member(a, record, field, "profile", "str")
        member(a, record, field, "rule", "str")
        member(a, record, field, "stages", "int")
        if "gemv" in record:  # recorded since the matrix-vector rule, with its facts
            member(a, record, field, "gemv", "str|null")
            listed = member(a, record, field, "gemv_realizations", "list", optional=True)
            if listed is not None:
                items(a, listed, "str", f"{field}.gemv_realizations")
            for key in ("k_splits", "k_chunk"):
                member(a, record, field, key, "positive")
            for key in ("combine_blocks", "workspace_floats", "pack_blocks", "launches",
                        "warpgroups", "blocks_per_multiprocessor", "shared_bytes", "barrier_sites",
                        "grid_m", "grid_n", "thread_blocks", "waves", "threads", "vector_width"):
                member(a, record, field, key, "count")
            member(a, record, field, "instruction", "str")
        if "a_vector_width" in record:  # tiled plans, since A is loaded at its own width
            member(a, record, field, "a_vector_width", "count")
        tile = member(a, record, field, "tile", "object")
        for key in ("block_m", "block_n", "block_k"):
            member(a, tile, f"{field}.tile", key, "positive")
    else:
        one_of(a, member(a, record, field, "op", "str"), tuple(REDUCTIONS), f"{field}.op")
        one_variant(a, member(a, record, field, "variant", "str"), f"{field}.variant")
        member(a, record, field, "profile", "str")
        limits = member(a, record, field, "device_limits", "object")
        path = f"{field}.device_limits"
        member(a, limits, path, "known", "bool")
        member(a, limits, path, "multiprocessors", "positive")
        for key in ("max_threads_per_block", "max_shared_bytes_per_block"):
            member(a, limits, path, key, "count")
        for key in ("max_registers_per_block", "cluster_blocks", "shared_bytes_per_multiprocessor"):
            member(a, limits, path, key, "count", optional=True)
        constants = member(a, record, field, "constants", "object")
        member(a, constants, f"{field}.constants", "register_overhead", "count")
        items(a, member(a, record, field, "candidates", "list"), "object", f"{field}.candidates")
        for key in ("selected", "fixed_variant", "stream", "subwarp"):
            member(a, record, field, key, "object|null", optional=True)


# ---- samples ---------------------------------------------------------------

def audit_phase(a, phase, name, samples, check_count=True):
    elapsed = phase["elapsed_ns"]
    per_call = phase["per_call_ns"]
    calls = phase["calls_per_sample"]
    if check_count:
        a.same(f"{name}.elapsed_ns (count)", len(elapsed), samples)
    a.same(f"{name}.per_call_ns (count)", len(per_call), len(elapsed))
    for i, (e, p) in enumerate(zip(elapsed, per_call)):
        a.same(f"{name}.per_call_ns[{i}]", p, e / calls)
    summary = phase["per_call_summary_ns"]
    if per_call:
        a.same(f"{name}.per_call_summary_ns.p50", summary["p50"], median(per_call))
        a.same(f"{name}.per_call_summary_ns.min", summary["min"], float(min(per_call)))
        a.same(f"{name}.per_call_summary_ns.max", summary["max"], float(max(per_call)))
    return per_call


def ratio(x, y):
    """x / y as the C side writes it: null (None) where y is not positive."""
    return x / y if y > 0 else None


def clock_off(a_mhz, b_mhz, tolerance):
    return abs(a_mhz - b_mhz) > tolerance * b_mhz


def clock_throttled(rule, reference, before, after, reasons):
    """docs/method.md §2.7: a masked clocks event reason, a read off the reference, or
    the two reads of the sample apart, each beyond the rule's tolerance."""
    t = rule["tolerance"]
    return bool(reasons & rule["reason_mask"]) or clock_off(before, reference, t) or \
        clock_off(after, reference, t) or clock_off(after, before, t)


def audit_clock_checks(a, device, metric, m, samples, budget):
    """Schema 7: every kept sample's clock reads judged as the device phase judged them,
    every discarded one throttled, the budget kept, and the flag exactly when throttled
    samples had to be kept."""
    name = f"device.{metric}.clock_checks"
    c = member(a, m, f"device.{metric}", "clock_checks", "object")
    if c is None or not c.get("checked"):
        return
    rule, reference = c["rule"], c["reference_sm_clock_mhz"]
    a.same(f"{name}.rule.discard_budget", rule["discard_budget"], budget)
    for field in ("sm_clock_before_mhz", "sm_clock_after_mhz", "clocks_event_reasons",
                  "kept_throttled"):
        a.same(f"{name}.{field} (count)", len(c[field]), samples)
    for i, (b, f, r, kept) in enumerate(zip(c["sm_clock_before_mhz"], c["sm_clock_after_mhz"],
                                           c["clocks_event_reasons"], c["kept_throttled"])):
        a.same(f"{name}.kept_throttled[{i}]", kept, clock_throttled(rule, reference, b, f, r))
    for k, d in enumerate(c["discarded"]):
        if not clock_throttled(rule, reference, d["sm_clock_before_mhz"],
                               d["sm_clock_after_mhz"], d["clocks_event_reasons"]):
            a.fail(f"{name}.discarded[{k}]", "a discarded sample whose reads pass the rule")
    if len(c["discarded"]) > budget:
        a.fail(f"{name}.discarded", f"{len(c['discarded'])} discards exceed the budget {budget}")
    kept = sum(1 for k in c["kept_throttled"] if k)
    if kept and len(c["discarded"]) < budget:
        a.fail(f"{name}.kept_throttled", "throttled samples kept while the budget lasted")
    flagged = any(f.startswith(f"throttling ({metric})") for f in device["flags"])
    a.same(f"device.flags (throttling ({metric}))", flagged, kept > 0)


def audit_clock_warmup(a, device, enabled):
    w = member(a, device, "device", "clock_warmup", "object")
    if w is None:
        return
    if not enabled and w.get("checked"):
        a.fail("device.clock_warmup.checked", "clock checks ran under --clock-checks off")
    unsteady = bool(w.get("checked")) and not w.get("steady")
    flagged = any(f.startswith("clock not steady after warm-up") for f in device["flags"])
    a.same("device.flags (clock not steady)", flagged, unsteady)
    if w.get("checked") and w["steady"] is False and w["reads"] < 20:
        a.fail("device.clock_warmup.reads", "an unsteady warm-up stopped before 20 reads")


def audit_device(a, device, samples, version=6, budget=None, clock_checks=True):
    complete = True
    if version >= 7:
        audit_clock_warmup(a, device, clock_checks)
    for metric in ("throughput", "latency"):
        m = device[metric]
        if version >= 7:
            # latency takes as many samples as throughput took: its budget is that count
            audit_clock_checks(a, device, metric, m, samples,
                               budget if metric == "throughput" else samples)
        control = m["control"]
        complete &= len(control["elapsed_ns"]) == samples
        audit_phase(a, control, f"device.{metric}.control", samples, check_count=False)
        a.same(f"device.{metric}.order (count)", len(m["order"]), samples)
        for i, order in enumerate(m["order"]):
            a.same(f"device.{metric}.order[{i}]", order,
                   "control,probe" if i % 2 == 0 else "probe,control")
        probe = m["probe"]
        # one entry a sample, null where the pair is incomplete
        a.same(f"device.{metric}.probe_over_control (count)", len(m["probe_over_control"]), samples)
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
                           ratio(probe["elapsed_ns"][i], control["elapsed_ns"][i]))
        summary = m["probe_over_control_summary"]
        a.same(f"device.{metric}.probe_over_control_summary.pairs", summary["pairs"], len(ratios))
        if ratios:
            a.same(f"device.{metric}.probe_over_control_summary.median", summary["median"], median(ratios))
            a.same(f"device.{metric}.probe_over_control_summary.min", summary["min"], float(min(ratios)))
            a.same(f"device.{metric}.probe_over_control_summary.max", summary["max"], float(max(ratios)))
    a.same("device.control_complete", device["control_complete"], complete)
    if "batch_modes" in device["throughput"]:
        audit_batch_modes(a, device["throughput"], samples)
    if version >= 9:
        audit_control_within_host(a, device)
    return complete


# cuEventElapsedTime's resolution with room, the clocks' rates apart, and the flag of a
# sample beyond both (src/measure/device_phase.c)
EVENT_RESOLUTION_NS = 1000.0
CLOCK_RATE_TOLERANCE = 1e-5
BEYOND_HOST = "scope order: GPU control of a batch exceeds the host's time around the same batch"


def audit_control_within_host(a, device):
    """Schema 9: every control records the host's time around its samples (latency
    too); each throughput control sample's GPU time against it, and the
    clock-disagreement flag exactly where a sample lies beyond it by more than the
    events' resolution and the clocks' rates (1 us + 10 ppm), with its count."""
    member(a, device["latency"]["control"], "device.latency.control", "host_elapsed_ns", "list")
    t = device["throughput"]
    controls = {"eager": t["control"]}
    controls.update((mode, r["control"]) for mode, r in t.get("batch_modes", {}).items()
                    if r["control"] is not None)
    for mode, control in controls.items():
        name = f"device.throughput.{'' if mode == 'eager' else f'batch_modes.{mode}.'}control"
        around = member(a, control, name, "host_elapsed_ns", "list")
        if around is None or len(around) != len(control["elapsed_ns"]):
            continue
        outside = sum(1 for g, h in zip(control["elapsed_ns"], around)
                      if g is not None and h is not None
                      and g - h > EVENT_RESOLUTION_NS + CLOCK_RATE_TOLERANCE * g)
        expected = f"{BEYOND_HOST} in {outside} of {len(around)} {mode} samples"
        flagged = [f for f in device["flags"] if f.startswith(BEYOND_HOST) and f" {mode} samples" in f]
        a.same(f"device.flags (GPU control beyond the host, {mode})",
               [f.startswith(expected) for f in flagged], [True] if outside else [])


def audit_paired(a, name, listed, numerators, denominators, samples):
    """A paired ratio list: one entry a sample; recomputed where both sides
    measured every sample; its summary from the listed values."""
    a.same(f"{name} (count)", len(listed), samples)
    if len(numerators) == samples and len(denominators) == samples:
        for i in range(samples):
            a.same(f"{name}[{i}]", listed[i], ratio(numerators[i], denominators[i]))
    return [r for r in listed if r is not None]


def audit_ratio_summary(a, name, summary, ratios):
    a.same(f"{name}.pairs", summary["pairs"], len(ratios))
    if ratios:
        a.same(f"{name}.median", summary["median"], median(ratios))
        a.same(f"{name}.min", summary["min"], float(min(ratios)))
        a.same(f"{name}.max", summary["max"], float(max(ratios)))


def audit_batch_modes(a, m, samples):
    """Schema 3: every batch mode's samples, pairings and order, and the
    host-gap-free figure the rankings use, re-derived."""
    eager = m["control"]["elapsed_ns"]
    order = m["scope_order"]
    a.same("device.throughput.scope_order (count)", len(order), samples)
    for i in range(0, len(order) - 1, 2):  # forward, then reversed
        a.same(f"device.throughput.scope_order[{i + 1}]", order[i + 1],
               ",".join(reversed(order[i].split(","))))
    complete = {"eager": len(eager) == samples}
    for mode, record in m["batch_modes"].items():
        name = f"device.throughput.batch_modes.{mode}"
        control, probe = record["control"], record["probe"]
        elapsed = [] if control is None else control["elapsed_ns"]
        if control is not None:
            audit_phase(a, control, f"{name}.control", samples, check_count=False)
        complete[mode] = len(elapsed) == samples
        if complete[mode] != ("unavailable" not in record):
            a.fail(f"{name}.unavailable", "must be present exactly when a control sample is missing")
        ratios = audit_paired(a, f"{name}.over_eager_control", record["over_eager_control"],
                              elapsed, eager, samples)
        audit_ratio_summary(a, f"{name}.over_eager_control_summary",
                            record["over_eager_control_summary"], ratios)
        probe_elapsed = [] if probe is None else probe["elapsed_ns"]
        if probe is not None:
            audit_phase(a, probe, f"{name}.probe", samples, check_count=False)
        ratios = audit_paired(a, f"{name}.probe_over_control", record["probe_over_control"],
                              probe_elapsed, elapsed, samples)
        audit_ratio_summary(a, f"{name}.probe_over_control_summary",
                            record["probe_over_control_summary"], ratios)
    chosen = next((mode for mode in ("graph", "held", "eager")
                   if complete.get(mode) and samples > 0), None)
    gap_free = m.get("gap_free")
    a.same("device.throughput.gap_free.mode", None if gap_free is None else gap_free["mode"], chosen)
    if chosen is not None and gap_free is not None:
        source = m["control"] if chosen == "eager" else m["batch_modes"][chosen]["control"]
        a.same("device.throughput.gap_free.per_call_p50_ns", gap_free["per_call_p50_ns"],
               median(source["per_call_ns"]))


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


def noise_meets(noise, bound, slack):
    """noise <= bound, with the decision's slack for a figure re-derived in another
    language: slack > 0 counts a noise just above the bound as meeting it, < 0 not."""
    return noise is not None and noise <= bound * (1 + slack)


def first_converged(rule, per_call, elapsed, slack):
    """The first prefix (its length) meeting the noise rule, or None: at least min_samples
    samples, at least min_time_s of their own timed length, noise <= max_noise."""
    sampled_ns = 0
    for k in range(1, len(per_call) + 1):
        sampled_ns += elapsed[k - 1]
        floors = k >= rule["min_samples"] and sampled_ns / 1e9 >= rule["min_time_s"]
        if floors and noise_meets(robust_cv(per_call[:k]), rule["max_noise"], slack):
            return k
    return None


def audit_noise_stop(a, name, stopping, per_call, elapsed):
    """Re-derives the noise rule's decision from the raw samples: the noise after every
    prefix, the first prefix meeting the rule; the recorded reason must be that decision."""
    taken, reason, rule = len(per_call), stopping["reason"], stopping
    # a prefix before the last must clearly miss the bound (slack -1e-9): had it met it,
    # sampling would have stopped there
    early = first_converged(rule, per_call[:-1], elapsed[:-1], -1e-9)
    if early is not None:
        a.fail(f"{name}.reason", f"the first {early} samples already met the noise "
               f"rule, yet {taken} were taken ({reason})")
    converged = first_converged(rule, per_call, elapsed, 1e-9) == taken
    if reason == "converged" and not converged:
        a.fail(f"{name}.reason", f"converged, but the noise of the {taken} samples "
               f"{short(robust_cv(per_call))} does not meet the rule")
    if reason == "max_samples":
        a.same(f"{name}.samples_taken (max_samples)", taken, rule["max_samples"])
    if reason == "timeout":
        if taken >= rule["max_samples"]:
            a.fail(f"{name}.reason", "timeout at max_samples: max_samples is checked first")
        if stopping["wall_s"] < rule["timeout_s"]:
            a.fail(f"{name}.wall_s", f"timeout after {stopping['wall_s']} s, "
                   f"before the {rule['timeout_s']} s of the rule")
    if reason != "converged" and converged:
        a.fail(f"{name}.reason", f"{reason}, but the {taken} samples met the noise rule")


def run_stopping_rule(a, measure):
    rule = measure.get("stopping")
    check(a, rule, "object", "run.measure.stopping")
    check_stopping(a, rule, "run.measure.stopping")
    return rule


def audit_stopping(a, name, stopping, measure, phase):
    """A phase's stopping record (version 6) against the run's rule and the phase's raw
    samples (host throughput; the device's eager throughput control): its parameters,
    count, noise, sampled time, the decision and the not_converged flag."""
    rule = run_stopping_rule(a, measure)
    check_stopping(a, stopping, name)
    for key in ("rule",) + tuple(k for k, _ in NOISE_PARAMETERS) + ("samples",):
        if key in rule or key in stopping:
            a.same(f"{name}.{key} (run.measure.stopping)", stopping.get(key), rule.get(key))
    per_call, elapsed = phase["per_call_ns"], phase["elapsed_ns"]
    taken = stopping["samples_taken"]
    if len(per_call) > taken:
        a.fail(f"{name}.samples_taken", f"{taken}, below the {len(per_call)} samples held")
    a.same(f"{name}.noise", stopping["noise"], robust_cv(per_call))
    a.same(f"{name}.sampled_s", stopping["sampled_s"], sum(elapsed) / 1e9, rel=1e-6)
    if stopping["wall_s"] < stopping["sampled_s"] * (1 - 1e-9):
        a.fail(f"{name}.wall_s", "shorter than the samples it holds")
    if rule["rule"] == "fixed":
        a.same(f"{name}.samples_taken (fixed)", taken, rule["samples"])
        a.same("run.measure.samples", measure["samples"], rule["samples"])
    else:
        a.same("run.measure.samples (max_samples)", measure["samples"], rule["max_samples"])
        # a device sample whose eager control failed leaves the decision on fewer samples
        # than were taken (the case is then incomplete): re-derived only when all are there
        if len(per_call) == taken:
            audit_noise_stop(a, name, stopping, per_call, elapsed)
    unconverged = stopping["reason"] in ("max_samples", "timeout") and not noise_meets(
        stopping["noise"], rule.get("max_noise", 0), 0)
    a.same(f"{name}.flags (not_converged)",
           [f.split(":")[0] for f in stopping["flags"]], ["not_converged"] if unconverged else [])


def audit_cpu_frequency(a, host):
    """Schema 7: the frequency-change flag re-derived from the recorded reads: the top
    CPU frequency moved by more than 10 % over the host phase (docs/method.md §2.7)."""
    f = member(a, host, "host", "cpu_frequency", "object")
    if f is None or not f.get("available"):
        return
    before, after = f["khz_before"], f["khz_after"]
    a.same("host.cpu_frequency.top_khz_before", f["top_khz_before"], max(before, default=0))
    a.same("host.cpu_frequency.top_khz_after", f["top_khz_after"], max(after, default=0))
    top0, top1 = max(before, default=0), max(after, default=0)
    changed = abs(top1 - top0) > 0.10 * top0
    a.same("host.cpu_frequency.flags (cpu frequency change)",
           any(x.startswith("cpu frequency change") for x in f["flags"]), changed)


def clock_budget(measure, samples):
    """The discard budget of the device throughput's clock checks: the most samples the
    rule may take (max_samples under the noise rule, else the fixed count)."""
    rule = measure.get("stopping") or {}
    if rule.get("rule") == "noise":
        return rule["max_samples"]
    return measure.get("samples", samples)


def audit_validity(a, case, doc):
    run, version = doc["run"], doc["schema_version"]
    measure = run["measure"]
    v = case["validation"]
    host = case["host"]
    samples = measure["samples"]
    if host is not None:
        # version 6: the count is the recorded samples_taken (under the noise rule it
        # differs per case; latency and the device phase follow it), checked first
        # against the samples, then against the rule's decision by audit_stopping
        if version >= 6:
            samples = host["stopping"]["samples_taken"]
        audit_phase(a, host["throughput"], "host.throughput", samples)
        audit_phase(a, host["latency"], "host.latency", samples)
        if version >= 6:
            audit_stopping(a, "host.stopping", host["stopping"], measure, host["throughput"])
        a.same("host.latency.calls_per_sample", host["latency"]["calls_per_sample"], 1)
        if version >= 7:
            audit_cpu_frequency(a, host)
    device_ok = True
    device = case["device"]
    if device is not None:
        # version 6: the device phase stops by the same rule, judged on its eager
        # throughput control, its count its own (latency follows it)
        stopping = device["throughput"].get("stopping") if version >= 6 else None
        if version >= 6:
            check(a, stopping, "object", "device.throughput.stopping")
            samples = member(a, stopping, "device.throughput.stopping", "samples_taken", "positive")
        device_ok = audit_device(a, device, samples, version, clock_budget(measure, samples),
                                 measure.get("clock_checks", True))
        if stopping is not None:
            audit_stopping(a, "device.throughput.stopping", stopping, measure,
                           device["throughput"]["control"])
    passed = False
    # version 8: every tolerance is docs/tolerances.md's times the run's recorded scale
    # (audited wherever recorded: runs written before the bump to 7 say 6)
    scale = run.get("tolerance_scale", 1.0)
    if v is not None:
        audit_one_validation(a, case, v, scale, version, "validation")
        passed = v["failed_elements"] == 0 and v["checked_elements"] > 0
    # from version 5 a case that validated carries its defences, and any defence that
    # failed makes it invalid however right its output
    defences = case.get("defences")
    if version >= 5 and (defences is None) != (v is None):
        a.fail("defences", "recorded exactly when the output was validated")
    if defences is not None:
        a.same("defences.launches_on_stream.outcome", defences["launches_on_stream"]["outcome"],
               on_stream_outcome(case["device"]))
    if defences is not None and schema8_defences(defences, version):
        audit_timed_outputs(a, case, defences["timed_outputs"], scale, version)
        audit_plausible(a, doc, case, defences["plausible"])
    defended = defences is None or all(d["outcome"] != "failed" for d in defences.values())
    valid = host is not None and v is not None and passed and device_ok and defended
    a.same("valid", case["valid"], valid)
    if valid and case["error"] is not None:
        a.fail("error", "a valid case carries an error")
    return valid


def audit_one_validation(a, case, v, scale, version, name):
    """A validation record (the case's, or timed_outputs' of one buffer set): the tolerance
    of the operation times the run's scale, the verdict and the figures behind it."""
    atol, rtol = tolerance(case["op"], case["n"], case.get("k"), case.get("realization"))
    if version >= 8 or "tolerance_scale" in v:
        a.same(f"{name}.tolerance_scale (run.tolerance_scale)", v["tolerance_scale"], scale)
    a.same(f"{name}.atol (docs/tolerances.md x the scale)", v["atol"], atol * scale)
    a.same(f"{name}.rtol (docs/tolerances.md x the scale)", v["rtol"], rtol * scale)
    passed = v["failed_elements"] == 0 and v["checked_elements"] > 0
    a.same(f"{name}.passed", v["passed"], passed)
    if v["unwritten_elements"] > v["failed_elements"]:
        a.fail(f"{name}.unwritten_elements", "unwritten elements must also count as failed")
    expected = case["m"] * (1 if case["op"] == "sum" else case["n"])
    a.same(f"{name}.checked_elements", v["checked_elements"], expected)
    audit_validation_figures(a, v, version, name)


def audit_timed_outputs(a, case, record, scale, version):
    """docs/method.md §8, timed_outputs: the buffer sets compared (at most the sets), the
    comparison re-checked as a validation, and the outcome it implies: failed exactly when
    a set's output is outside the tolerance, that set named."""
    if record["outcome"] == "not_run":
        return
    field = "defences.timed_outputs"
    if record["sets_checked"] > record["sets"]:
        a.fail(f"{field}.sets_checked", f"{record['sets_checked']} of {record['sets']} sets")
    v = record["validation"]
    audit_one_validation(a, case, v, scale, version, f"{field}.validation")
    a.same(f"{field}.outcome (its validation)", record["outcome"],
           "passed" if v["passed"] else "failed")
    failed_set = record["failed_set"]
    a.same(f"{field}.failed_set (present iff failed)", failed_set is not None, not v["passed"])
    if failed_set is not None and failed_set >= record["sets"]:
        a.fail(f"{field}.failed_set", f"set {failed_set} of {record['sets']}")


# docs/method.md §8, plausible: the margins (src/measure/plausible.h), and how far a
# worker's host throughput median may fall below the harness's clock around its requests
PLAUSIBLE_MARGIN, PLAUSIBLE_FLOP_MARGIN = 4.0, 1.05
# on a GPU whose buffer sets are cold (>= 4x L2), when the record names its basis
PLAUSIBLE_COLD_DEVICE_MARGIN = 2.0


def plausible_margin(case, record, gpu, field, a):
    """The margin the gate applies: twice the ceiling for a GPU case over cold buffer sets,
    four times otherwise; records without margin_basis (the first schema 8 build) used four
    times everywhere."""
    if "margin_basis" not in record:
        return PLAUSIBLE_MARGIN
    state = ((case.get("provider_details") or {}).get("buffers") or {}).get("state")
    cold = gpu and state == "cold"
    a.same(f"{field}.margin_basis", record["margin_basis"],
           "cold device buffers" if cold else "warm device buffers" if gpu else "host")
    return PLAUSIBLE_COLD_DEVICE_MARGIN if cold else PLAUSIBLE_MARGIN
WORKER_CLOCK_FACTOR, WORKER_CLOCK_SLACK_NS = 4.0, 5e6
GPU_BACKENDS = ("cuda", "torch-cuda")
# Dense FLOP per cycle per SM by compute capability (src/measure/plausible.c, re-stated):
# the CUDA cores' FP32 FMA, and TF32 on the tensor cores (any tensor realization).
FP32_PER_CYCLE = {(7, 0): 128, (7, 2): 128, (7, 5): 128, (8, 0): 128, (8, 6): 256, (8, 7): 256,
                  (8, 9): 256, (9, 0): 256}
TF32_PER_CYCLE = {(8, 0): 1024, (8, 6): 512, (8, 9): 512, (9, 0): 2048}


def gemm_peak_gflops(doc, realization):
    """The peak of device 0 for the realization, or None where the table has no rate."""
    devices = (doc["provenance"].get("gpu") or {}).get("devices") or [{}]
    device = devices[0]
    try:
        major, minor = (int(x) for x in str(device.get("compute_capability")).split("."))
    except ValueError:
        return None
    sms, clock = device.get("multiprocessors"), device.get("max_sm_clock_khz")
    table = FP32_PER_CYCLE if realization == "simt" else TF32_PER_CYCLE
    if (major, minor) not in table or not _int(sms) or not _int(clock) or sms <= 0 or clock <= 0:
        return None
    return sms * table[(major, minor)] * clock / 1e6


def plausible_figures(case):
    """(scope, p50 per call) of every timed throughput figure the record holds: the host
    phase's, then the device phase's eager, graph and held controls."""
    scopes = []
    host, device = case["host"], case["device"]
    if host is not None:
        scopes.append(("host", host["throughput"]["per_call_ns"]))
    if device is not None:
        scopes.append(("eager", device["throughput"]["control"]["per_call_ns"]))
        modes = device["throughput"].get("batch_modes") or {}
        for mode in ("graph", "held"):
            control = (modes.get(mode) or {}).get("control")
            if control is not None:
                scopes.append((mode, control["per_call_ns"]))
    figures = []
    for scope, per_call in scopes:
        values = [x for x in per_call if x is not None]
        p50 = median(values)
        if p50 is not None and p50 > 0:
            figures.append((scope, p50))
    return figures


def host_copy_ceiling(a, doc, case, record):
    """The CPU ceiling re-derived from its recorded copies: each copy's best rate (read
    plus written bytes over the fastest sample), the copies of the case's footprint and of
    its share per CPU, the best of them times the CPUs; None without copies."""
    field = "defences.plausible"
    copies = record.get("host_copies") or []
    if not copies:
        return None
    cpus = record["cpus"]
    affinity = doc["provenance"]["host"].get("affinity_cpus")
    if _int(affinity):
        a.same(f"{field}.cpus (provenance.host.affinity_cpus)", cpus, affinity)
    if len(copies) > (2 if cpus > 1 else 1):
        a.fail(f"{field}.host_copies (count)", f"{len(copies)} copies for {cpus} CPU(s)")
    best = None
    for i, copy in enumerate(copies):
        at = f"{field}.host_copies[{i}]"
        footprint = case["minimal_bytes"] / (cpus if i == 1 else 1)
        a.same(f"{at}.footprint_bytes (the case's minimal bytes{' per CPU' if i else ''})",
               copy["footprint_bytes"], footprint)
        a.same(f"{at}.bytes_copied (half the footprint)", copy["bytes_copied"],
               max(4, int(footprint / 2)))
        if not copy["elapsed_ns"]:
            a.fail(f"{at}.elapsed_ns", "no sample")
        fastest = max(min(copy["elapsed_ns"]), 1)
        gbps = 2.0 * copy["bytes_copied"] * copy["calls_per_sample"] / fastest
        a.same(f"{at}.gbps (its fastest sample)", copy["gbps"], gbps)
        best = gbps if best is None else max(best, gbps)
    return best * cpus


def worker_clock_disagrees(host):
    """A worker's host samples the harness's clock cannot reproduce: one above the
    harness's time of its request, or a throughput median below the harness's by more
    than WORKER_CLOCK_FACTOR times plus WORKER_CLOCK_SLACK_NS."""
    for metric in ("throughput", "latency"):
        phase = host[metric]
        if any(e > h for e, h in zip(phase["elapsed_ns"], phase.get("harness_elapsed_ns", []))):
            return True
    phase = host["throughput"]
    if not phase["elapsed_ns"]:
        return False
    return (median(phase["harness_elapsed_ns"]) >
            WORKER_CLOCK_FACTOR * median(phase["elapsed_ns"]) + WORKER_CLOCK_SLACK_NS)


def audit_plausible(a, doc, case, record):
    """docs/method.md §8, plausible, re-derived from the raw samples: every figure (a
    scope's p50 per call; GB/s over the minimal bytes; gemm's GFLOP/s), the ceiling (the
    run's device copy ceiling on a GPU, the recorded host copies on the CPU), gemm's peak
    from device 0's facts, the margins, and the outcome they imply."""
    field = "defences.plausible"
    figures = plausible_figures(case)
    gpu = case["backend"] in GPU_BACKENDS
    if gpu:
        ceiling = doc["run"].get("copy_ceiling")
        gbps = ceiling.get("gbps") if isinstance(ceiling, dict) else None
        ceiling = gbps if is_number(gbps) and gbps > 0 else None
    peak = gemm_peak_gflops(doc, case.get("realization")) if gpu and case["op"] == "gemm" else None
    host = case["host"]
    clock = host is not None and "harness_elapsed_ns" in host["throughput"]
    if record["outcome"] == "not_run":
        # no figure, or nothing to judge them by: where the ceiling is the run's (a GPU)
        # and a figure exists, or a worker's clock was recorded, the gate had to run
        if clock or (figures and gpu and (ceiling is not None or peak is not None)):
            a.fail(f"{field}.outcome", f"not run, though {len(figures)} figure(s) and a "
                   f"ceiling, a peak or a worker's clock were there")
        return
    a.same(f"{field}.worker_clock (harness_elapsed_ns recorded)", record["worker_clock"], clock)
    if not gpu:
        ceiling = host_copy_ceiling(a, doc, case, record)
    a.same(f"{field}.figures (count)", len(record["figures"]), len(figures))
    for i, (scope, p50) in enumerate(figures):
        at = f"{field}.figures[{i}]"
        recorded = record["figures"][i]
        a.same(f"{at}.scope", recorded["scope"], scope)
        a.same(f"{at}.per_call_p50_ns", recorded["per_call_p50_ns"], p50)
        a.same(f"{at}.gbps (minimal bytes / p50)", recorded["gbps"], case["minimal_bytes"] / p50)
        flops = (2.0 * case["m"] * case["n"] * case["k"] / p50) if case["op"] == "gemm" else None
        a.same(f"{at}.gflops", recorded["gflops"], float("nan") if flops is None else flops)
    margin = plausible_margin(case, record, gpu, field, a)
    a.same(f"{field}.margin", record["margin"], margin)
    a.same(f"{field}.flop_margin", record["flop_margin"], PLAUSIBLE_FLOP_MARGIN)
    source = None if ceiling is None else ("device_copy" if gpu else "host_copy")
    a.same(f"{field}.ceiling_source", record["ceiling_source"], source)
    a.same(f"{field}.ceiling_gbps", record["ceiling_gbps"],
           float("nan") if ceiling is None else ceiling)
    a.same(f"{field}.peak_gflops", record["peak_gflops"], float("nan") if peak is None else peak)
    if clock and worker_clock_disagrees(host):
        a.same(f"{field}.outcome (the worker's host samples against the harness's clock)",
               record["outcome"], "failed")
        return
    if not figures or (ceiling is None and peak is None and not clock):
        a.fail(f"{field}.outcome", f"{record['outcome']}, with nothing to judge")
    if not figures:
        return
    scope, p50 = min(figures, key=lambda f: f[1])
    outcome = "passed"
    if ceiling is not None and case["minimal_bytes"] / p50 > margin * ceiling:
        outcome = "failed"
    if peak is not None and 2.0 * case["m"] * case["n"] * case["k"] / p50 > PLAUSIBLE_FLOP_MARGIN * peak:
        outcome = "failed"
    a.same(f"{field}.outcome (the fastest figure, {scope}, against the bounds)",
           record["outcome"], outcome)


def probe_scopes(device):
    """Every probe scope of a device record: each metric's eager probe and its batch
    modes' probes, those that took samples."""
    for metric in ("throughput", "latency"):
        m = device[metric]
        yield m.get("probe")
        for mode in (m.get("batch_modes") or {}).values():
            yield mode.get("probe")


def on_stream_outcome(device):
    """docs/method.md §8, launches_on_stream, from the recorded probe samples: failed when
    a probe sample saw no kernel or any kernel on another stream, not run without a
    device record (a CPU provider) or probe samples, else passed."""
    if device is None:
        return "not_run"
    if device.get("probe_samples_without_kernels", 0) > 0:
        return "failed"
    scopes = [s for s in probe_scopes(device) if s is not None and s["side_stream_kernels"]]
    if not scopes:
        return "not_run"
    return "failed" if any(sum(s["side_stream_kernels"]) > 0 for s in scopes) else "passed"


# Slack for figures printed as decimal (17 significant digits round-trip; the bounds are
# recomputed here in another order of operations): far below any real error.
PRINT_SLACK = 1e-12


def audit_validation_figures(a, v, version, name="validation"):
    """The validation's figures agree with its verdict (docs/results-schema.md): a passed
    check has no error beyond the tolerance at the largest reference (schema version 2
    records max_abs_reference; version 1 lacks it, and only that check is skipped), a
    non-finite output fails, and the first failure recorded is one."""
    a.checks += 1
    atol, rtol = v["atol"], v["rtol"]
    if v["failed_elements"] > v["checked_elements"]:
        a.fail(f"{name}.failed_elements", f"{v['failed_elements']} failed of "
               f"{v['checked_elements']} checked")
    # the C side writes the infinite error of a non-finite output as null
    non_finite = v["max_abs_error"] is None
    a.same(f"{name}.non_finite_errors (max_abs_error null)", v["non_finite_errors"], non_finite)
    if non_finite and v["passed"]:
        a.fail(f"{name}.passed", "passed with a non-finite output (max_abs_error null)")
    if v["passed"] and version >= 2:
        reference = v["max_abs_reference"]
        if reference is None:
            a.fail(f"{name}.max_abs_reference", "passed with a non-finite reference")
        bound = atol + rtol * reference
        if v["max_abs_error"] > bound * (1 + PRINT_SLACK) + PRINT_SLACK * atol:
            a.fail(f"{name}.max_abs_error", f"{v['max_abs_error']!r} exceeds the tolerance "
                   f"atol + rtol * max_abs_reference = {bound!r} of a passed check")
    first = v.get("first_failure")
    a.same(f"{name}.first_failure (present iff failed_elements > 0)", first is not None,
           v["failed_elements"] > 0)
    if first is not None:
        audit_first_failure(a, first, atol, rtol, v["checked_elements"], name)


def audit_first_failure(a, first, atol, rtol, checked, name="validation"):
    if first["index"] >= checked:
        a.fail(f"{name}.first_failure.index", f"{first['index']} of {checked} elements checked")
    got, expected = first["got"], first["expected"]
    if got is None or expected is None:  # a non-finite output or reference always fails
        return
    bound = atol + rtol * abs(expected)
    if abs(got - expected) < bound * (1 - PRINT_SLACK):
        a.fail(f"{name}.first_failure", f"got {got!r}, expected {expected!r}: within the "
               f"tolerance {bound!r}, not a failure")


# ---- planner (docs/method.md §7 and docs/results-schema.md), re-implemented -------

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
# (analytic: docs/method.md §7; calibrated and calibrated-2: docs/planner.md).
BLOCK_WEIGHT = {"analytic": 16, "calibrated": 32, "calibrated-2": 32}
# calibrated-2's preferences before the least kernel score: candidates of whole groups where
# any, then threads reading at least MIN_THREAD_READ bytes (or grids that fit the resident
# threads, SM_THREADS a multiprocessor) where any.
WHOLE_GROUPS_FIRST = {"calibrated-2": True}
MIN_THREAD_READ = {"calibrated-2": 32}
SM_THREADS = 2048


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
    blocks = -(-m // p)
    c = {
        "subgroups": s, "packing": p, "width": width, "threads": threads, "slots": slots,
        "reductions": red, "rounds": rounds, "storage": storage, "score": score, "waves": waves,
        "kernel_score": score * waves, "shared_bytes": 0 if s == 1 else red * s * p * 4,
        "barrier_sites": 0 if s == 1 else red, "lane_utilisation": n / (width * slots),
        "independent_subgroups": p if s == 1 else 0, "thread_blocks": blocks,
        "whole_groups": width * slots == n, "thread_read_bytes": slots * gr,
        "grid_threads": blocks * threads,
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


# Subwarp rows (docs/planner.md): automatic plans of rows of at most SUBWARP_MAX_ROW elements
# give each row the fewest lanes (a power of two, at most 16) that cache at most SUBWARP_SLOTS
# elements a lane, in blocks of SUBWARP_THREADS threads. Records before the mapping carry no
# constants.subwarp_max_row and were planned without it.
SUBWARP_MAX_ROW, SUBWARP_SLOTS, SUBWARP_THREADS = 32, 8, 256


def subwarp_facts(op, m, n):
    """The facts of a row reduction of n-element rows on `lanes` lanes each, derived by counting."""
    lanes = next(g for g in (1, 2, 4, 8, 16) if g * SUBWARP_SLOTS >= n or g == 16)
    slots = -(-n // lanes)
    rows_per_block = SUBWARP_THREADS // lanes
    return {"lanes": lanes, "slots": slots, "rows_per_warp": 32 // lanes,
            "threads_per_block": SUBWARP_THREADS, "rows_per_block": rows_per_block,
            "thread_blocks": -(-m // rows_per_block), "reductions": REDUCTIONS[op],
            "shuffle_levels": lanes.bit_length() - 1, "lane_utilisation": n / (lanes * slots),
            "shared_bytes": 0, "barrier_sites": 0}


def best_candidate(cands, profile, sms):
    """The index of the profile's pick among cands, or None: the first least kernel score among
    the accepted, under each of the profile's preferences that some accepted candidate meets."""
    min_read = MIN_THREAD_READ.get(profile, 0)

    def starved(c):
        return min_read and c["grid_threads"] > SM_THREADS * sms and c["thread_read_bytes"] < min_read

    def least(whole, fed):
        best = None
        for i, c in enumerate(cands):
            if c["rejected"] or (whole and not c["whole_groups"]) or (fed and starved(c)):
                continue
            if best is None or c["kernel_score"] < cands[best]["kernel_score"]:
                best = i
        return best

    whole = WHOLE_GROUPS_FIRST.get(profile, False) and least(True, False) is not None
    fed = bool(min_read) and least(whole, True) is not None
    return least(whole, fed)


# Chunks in shared memory (docs/planner.md): a cluster row of an operation with a row output keeps
# a chunk too long for registers in at most CLUSTER_SHARED_BYTES of shared memory, and softmax's
# rows that no register candidate holds take a cluster of the fewest blocks (>= 2) whose chunks
# fit. Records before it carry no constants.cluster_shared_bytes and were planned without it.
# The norms' rows take it only from CLUSTER_SHARED_WEIGHT_MIN_BLOCKS chunks (records before the
# floor carry no constants.cluster_shared_weight_min_blocks: from 2).
CLUSTER_SHARED_BYTES = 96 * 1024
CLUSTER_SHARED_WEIGHT_MIN_BLOCKS = 3


def chunk_of(n, k):
    """A row's chunk for k blocks: ceil(n / k), rounded up to whole groups of 4."""
    return -(-(-(-n // k)) // 4) * 4


def fits_shared(op, chunk):
    return op != "sum" and 4 * chunk <= CLUSTER_SHARED_BYTES


def shared_cluster_k(op, n, cluster_limit, with_weight, weight_min_blocks):
    """Blocks a row for rows no register candidate holds: the fewest from 2 whose chunks fit the
    shared cache, or 0 past the cluster limit and, for the operations with a weight (rmsnorm,
    layernorm), unless with_weight or when fewer than weight_min_blocks, which stream."""
    weight = op in ("rmsnorm", "layernorm")
    if weight and not with_weight:
        return 0
    k = next((k for k in range(2, cluster_limit + 1)
              if chunk_of(n, k) > 32 * 256 and fits_shared(op, chunk_of(n, k))), 0)
    return 0 if weight and k < weight_min_blocks else k


# Persistent rows (docs/planner.md): few rows with a row output too long for the largest cluster's
# chunks in shared memory take every resident block (PERSISTENT_BLOCKS_PER_SM an SM) in groups of
# at least the fewest blocks whose chunks fit, a group a row at a time. Records before them carry
# no constants.persistent_blocks_per_sm and were planned without it; records of the first builds
# with them (c9ab1c0, ddc0b8a) carry no persistent_shared_bytes (their chunk alone in shared
# memory), and those before the weight rule (e0478e9) no persistent_param_bytes.
PERSISTENT_BLOCKS_PER_SM = 2
PERSISTENT_SHARED_BYTES = 27 * 16 * 256  # a ring of 27 groups of 4 floats a thread
PERSISTENT_PARAM_BYTES = 16 << 20  # weight and bias bytes L2 keeps across turns
PERSISTENT_BLOCK_EXTRA = 2048  # a block's reserved and static shared memory, with room to spare
PARAMS = {"sum": 0, "softmax": 0, "rmsnorm": 1, "layernorm": 2}  # weight, bias


def persistent_groups(op, m, n, limits, param_rule):
    """Row groups of a persistent row, or 0 where the rule does not take the rows (param_rule:
    the record's build left rows whose weight and bias pass PERSISTENT_PARAM_BYTES in more than
    one turn to the cluster rule; records without the device's shared memory a multiprocessor
    were planned without asking it)."""
    sms, cluster_limit = limits["multiprocessors"], limits.get("cluster_blocks", 0)
    per_sm = limits.get("shared_bytes_per_multiprocessor")
    room = PERSISTENT_BLOCKS_PER_SM * (PERSISTENT_SHARED_BYTES + PERSISTENT_BLOCK_EXTRA)
    if cluster_limit < 2 or fits_shared(op, chunk_of(n, cluster_limit)) or op == "sum" or (
            per_sm is not None and per_sm < room):
        return 0
    resident = PERSISTENT_BLOCKS_PER_SM * sms
    least = next((k for k in range(cluster_limit + 1, resident + 1)
                  if fits_shared(op, chunk_of(n, k))), None)
    if least is None:
        return 0
    most = resident // least
    turns = -(-m // most)
    if param_rule and turns > 1 and 4 * n * PARAMS[op] > PERSISTENT_PARAM_BYTES:
        return 0
    return -(-m // turns)


def expected_plan(record):
    op, m, n, variant = record["op"], record["m"], record["n"], record["variant"]
    limits = record["device_limits"]
    pairs = [(1, p) for p in range(1, 9)] + [(s, 1) for s in range(2, 33)]
    overhead = record["constants"]["register_overhead"]
    weight = BLOCK_WEIGHT[record["profile"]]
    cands = [candidate(op, m, n, s, p, limits, overhead, weight) for s, p in pairs]
    best = best_candidate(cands, record["profile"], limits["multiprocessors"])
    plan = {"candidates": cands, "best": best, "mapping": None, "selected": None, "chosen": None}
    sms = limits["multiprocessors"]
    # clusters (docs/results-schema.md): records before them carry no cluster_blocks
    cluster_limit = limits.get("cluster_blocks", 0)
    cluster_k = split_chunks(m, n, sms, cluster_limit) if cluster_limit >= 2 else 0
    shared_cache = "cluster_shared_bytes" in record["constants"]
    # the first builds with shared chunks gave them to the norms' long rows too (0dd5ff5,
    # 684ae5d), the next (3e0be6f) did not, and neither recorded cluster_shared_with_weight: such a
    # record re-derives under the rule its mapping names
    with_weight = record["constants"].get("cluster_shared_with_weight",
                                          record.get("mapping") == "cluster_row")
    # the floor of chunks for those since 2026-12-07's A/B (before it: any, from 2)
    weight_min_blocks = record["constants"].get("cluster_shared_weight_min_blocks", 2)
    persistent = "persistent_blocks_per_sm" in record["constants"]
    param_rule = "persistent_param_bytes" in record["constants"]
    groups = persistent_groups(op, m, n, limits, param_rule) if persistent else 0
    if variant == "automatic":
        if m < sms and n >= 8192 and groups:
            plan["mapping"] = "persistent_row"
        elif m < sms and n >= 8192 and cluster_k and 2 * m * cluster_k >= sms:
            plan["mapping"] = "cluster_row"
        elif m < sms and n >= 8192:
            plan["mapping"] = "split_row"
        elif "subwarp_max_row" in record["constants"] and n <= SUBWARP_MAX_ROW:
            plan["mapping"], plan["subwarp"] = "subwarp_rows", subwarp_facts(op, m, n)
        elif best is not None:
            plan["mapping"], plan["selected"], plan["chosen"] = "register_rows", cands[best], best
        elif shared_cache and shared_cluster_k(op, n, cluster_limit, with_weight,
                                               weight_min_blocks):
            plan["mapping"] = "cluster_row"
            cluster_k = shared_cluster_k(op, n, cluster_limit, with_weight, weight_min_blocks)
        else:
            plan["mapping"] = "block_streaming"
    else:
        s, p = fixed_shape(variant)  # reference, candidate or sSpP: one path
        fixed = candidate(op, m, n, s, p, limits, overhead, weight)
        plan["fixed"] = fixed
        if not fixed["rejected"]:
            plan["mapping"], plan["selected"] = "register_rows", fixed
            plan["chosen"] = pairs.index((s, p)) if (s, p) in pairs else None
        else:
            plan["mapping"] = "block_streaming"
    if plan["mapping"] in ("block_streaming", "split_row", "cluster_row", "persistent_row"):
        words = STAT_WORDS[op]
        if plan["mapping"] == "block_streaming":
            threads, per_row, chunk, blocks, launches = 512, 1, n, m, 1
        else:
            if plan["mapping"] == "cluster_row":
                k = cluster_k
            elif plan["mapping"] == "persistent_row":
                k = PERSISTENT_BLOCKS_PER_SM * sms // groups
            else:
                k = split_chunks(m, n, sms, 0)
            chunk = chunk_of(n, k)
            per_row = -(-n // chunk)
            threads, blocks = 256, m * per_row
            launches = 2 if plan["mapping"] == "split_row" else 1
        plan["stream"] = {"threads_per_block": threads, "blocks_per_row": per_row,
                          "chunk_elements": chunk, "thread_blocks": blocks,
                          "memory_passes": 1 if op == "sum" else 2, "launches": launches,
                          "shared_bytes": combine_bytes(words, threads), "barrier_sites": 1}
        if shared_cache:
            plan["stream"]["cache_shared_bytes"] = 0
        if "row_groups" in (record.get("stream") or {}):  # recorded since persistent rows
            plan["stream"]["row_groups"] = 0
        if plan["mapping"] == "split_row" and op == "sum" and split_last_merges(record):
            # one launch: the row's last block merges its partials (a second block combine,
            # and its verdict: a word of shared memory and a barrier)
            plan["stream"].update(launches=1, shared_bytes=2 * combine_bytes(words, threads) + 4,
                                  barrier_sites=3)
        if plan["mapping"] == "persistent_row":
            # every resident block in `groups` groups, the chunk in shared memory, two block
            # combines (the chunk's statistics, the row's) and a block barrier after the group's
            # counter (not in the records of the tagged exchange)
            ring = "persistent_shared_bytes" in record["constants"]
            plan["stream"].update(row_groups=groups, thread_blocks=groups * per_row,
                                  memory_passes=1,
                                  cache_shared_bytes=PERSISTENT_SHARED_BYTES if ring else 4 * chunk,
                                  shared_bytes=2 * combine_bytes(words, threads),
                                  barrier_sites=2 if persistent_tagged(record["stream"]) else 3,
                                  cluster_blocks=0)
        elif plan["mapping"] == "cluster_row":
            cluster_facts(plan["stream"], record["stream"], op, words, per_row, chunk, threads)
            if shared_cache and chunk > 32 * threads and fits_shared(op, chunk):
                plan["stream"]["memory_passes"], plan["stream"]["cache_shared_bytes"] = 1, 4 * chunk
        elif "cluster_blocks" in (record.get("stream") or {}):
            plan["stream"]["cluster_blocks"] = 0
    return plan


def split_last_merges(record):
    """Whether the record's build merges a row's split partials (one value a row) in the last
    block of the row, in one launch (constants.split_last_block_merges, since that build;
    before it, a second launch merged them)."""
    return record["constants"].get("split_last_block_merges") is True


def combine_bytes(words, threads):
    """Shared memory of a block combine: each warp's statistics (streaming.cuh)."""
    return words * (threads // 32) * 4


def persistent_tagged(recorded):
    """Whether a persistent record's kernel exchanged tagged statistics (two barrier sites, the
    source's relaxed 64-bit words: the builds 1655874 to 96ed140, an experiment reverted by
    8ad343a) or met at a counter (three sites: a fence, an atomic and a block barrier after the
    poll; the source check holds a record to its kernel's text)."""
    return recorded["barrier_sites"] == 2


def cluster_generation(recorded, combine, words):
    """Which exchange of the row's statistics a cluster record's kernel had, from its facts:
    "read" (0a06e8e: one barrier site, the block's statistics alone in shared memory beside
    the block combine's `combine` bytes), "fetch" (two sites: the row's fetched into shared
    memory) or "push" (one site, the row's pushed with st.async; the source check holds a
    record to its kernel's text)."""
    if recorded["barrier_sites"] == 2:
        return "fetch"
    if recorded["shared_bytes"] == combine + 4 * words:
        return "read"
    return "push"


def cluster_facts(stream, recorded, op, words, per_row, chunk, threads):
    """A cluster row's facts beyond the split's: one cluster of per_row blocks, each keeping its
    statistics in shared memory for the others, and the kernel generation that made the record."""
    stream["cluster_blocks"] = per_row
    generation = cluster_generation(recorded, stream["shared_bytes"], words)
    if generation == "read":
        # the first cluster kernel (0a06e8e): every thread read the row's statistics from the
        # other blocks itself, no fetch into shared memory and no barrier for it
        stream["shared_bytes"] += 4 * words
        return
    if generation == "fetch":
        # the row's per_row statistics fetched into shared memory, then a barrier before the merge
        stream["barrier_sites"] = 2
        stream["shared_bytes"] += 4 * words * (1 + per_row)
    else:
        # since the push (st.async): the row's per_row statistics arrive in shared memory,
        # counted on an 8-byte mbarrier every thread waits on; no barrier for them
        stream["shared_bytes"] += 8 + 4 * words * per_row
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


PREFERENCE_FACTS = ("whole_groups", "thread_read_bytes", "grid_threads")
PREFERENCE_CONSTANTS = ("whole_groups_first", "min_thread_read", "sm_threads")


def audit_preference_constants(a, record):
    """Whether the record carries calibrated-2's facts (recorded since that profile, under every
    profile), and then that its constants are its profile's. A record is taken for one made before
    them only when it carries none of them, neither the constants nor any candidate's facts; a
    calibrated-2 record must carry them."""
    constants = record["constants"]
    candidates = [c for c in record["candidates"] if isinstance(c, dict)]
    candidates += [record[k] for k in ("selected", "fixed_variant") if isinstance(record.get(k), dict)]
    present = any(k in constants for k in PREFERENCE_CONSTANTS) or any(
        k in c for c in candidates for k in PREFERENCE_FACTS)
    if record["profile"] == "calibrated-2":
        present = True
    if present:
        a.same("plan.constants.whole_groups_first", constants.get("whole_groups_first"),
               WHOLE_GROUPS_FIRST.get(record["profile"], False))
        a.same("plan.constants.min_thread_read", constants.get("min_thread_read"),
               MIN_THREAD_READ.get(record["profile"], 0))
        a.same("plan.constants.sm_threads", constants.get("sm_threads"), SM_THREADS)
    return present


def audit_candidate(a, recorded, expected, field):
    for key, value in expected.items():
        if key == "payload_bytes":
            for k2, v2 in value.items():
                a.same(f"{field}.payload_bytes.{k2}", recorded["payload_bytes"][k2], v2)
        elif key == "rejected":
            a.same(f"{field}.rejected", recorded["rejected"], value)
        else:
            a.same(f"{field}.{key}", recorded.get(key), float(value) if isinstance(value, float) else value,
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


def small_k_step(k, bm, bn):
    """A small-k simt tile's k step: of 32, 16, 8 (whole float4 loads for the tile: bm and bn
    times the step at least 1024) the one that pads k least, the larger on a tie."""
    steps = [s for s in (32, 16, 8) if bm * s >= 1024 and bn * s >= 1024]
    return min(steps, key=lambda s: (ceil_div(k, s) * s, -s))


def gemm_rule_tile(record, warpgroup_mma, scalar_load):
    """docs/gemm.md's rule (or the user's block) for the record's realization,
    on a device with wgmma (compute capability 9.0) or without; scalar_load: whether A or B
    (and the output) is loaded one float at a time, as the audit derives it from the case."""
    m, n, sms, tile = record["m"], record["n"], record["multiprocessors"], record["tile"]
    k = record["k"]
    user = record["profile"] == "user-block"
    if user:
        return tile["block_m"], tile["block_n"], tile["block_k"]
    # rules recorded since the small-k rule name it: simt k <= 64, tensor k <= 48
    small_k_rule = "small k" in record["rule"]
    if record["realization"] == "simt" and small_k_rule:
        tiles = [(128, 128, 32), (128, 64, 32), (64, 64, 16)]
        wide = ceil_div(m, 128) * ceil_div(n, 256)
        if k > 64 and 10 * wide >= 9 * ceil_div(wide, sms) * sms:
            return 128, 256, 32
        bm, bn, bk = next((t for t in tiles if ceil_div(m, t[0]) * ceil_div(n, t[1]) >= sms),
                          (32, 32, 32))
        return bm, bn, small_k_step(k, bm, bn) if k <= 64 else bk
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
    # rules that say so take the single-launch kernel's 128x128 from a quarter of a wave, or
    # whatever the grid
    below_a_wave = "whatever the grid" in record["rule"] or (
        "a quarter" in record["rule"] and 4 * ceil_div(m, 128) * ceil_div(n, 128) >= sms)
    small_k = small_k_rule and k <= 48  # mma.sync with a k step of 16, wgmma or not
    if (large or below_a_wave) and warpgroup_mma and record["realization"] == "tensor" and \
            not small_k and "tensor maps" in record["rule"] and not scalar_load:
        # the single-launch kernel (rules that name tensor maps): 256 rows of m a block
        return (256, 128, 32) if ceil_div(m, 256) * ceil_div(n, 128) >= sms else (128, 128, 32)
    if large and warpgroup_mma and record["realization"] == "tensor" and not small_k:
        return (128, 256, 32) if ceil_div(m, 128) * ceil_div(n, 256) >= sms else (128, 128, 32)
    bk = 16 if small_k else 32
    # rules recorded since small k takes four warps with 3xTF32 or a scalar load say so
    if small_k and "64x64 with 3xTF32 or a scalar load" in record["rule"] and (
            record["realization"] == "tensor-3xtf32" or scalar_load):
        return 64, 64, bk
    return (128, 128, bk) if large else (64, 64, bk)


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


def is_wgmma_tma_tile(bm, bn, bk):
    return bm in (128, 256) and bn == 128 and bk == 32


def wgmma_tma_facts(record, bm, bn, bk):
    """The single-launch wgmma kernel's facts (docs/gemm.md): a producer and two consumer
    warpgroups (384 threads), each consumer all bm rows x 64 columns, one block an SM; stages
    of A's tile (bm x bk) and B's (bk rows of bn + 8), 4 at 256 rows and 6 at 128, 1024
    bytes to align them to the swizzle's period, two 8-byte mbarriers a stage (three in the
    experiment builds whose rule rounded A in shared memory: evidence/
    2026-12-02-h200-wgmma-one-launch/call2); one barrier (after the mbarriers' set-up)."""
    stages = 4 if bm == 256 else 6
    barrier_bytes = 24 if "rounded to TF32 in shared memory" in record["rule"] else 16
    return {"tm": bm, "tn": 64, "warps": (0, 0), "warpgroups": 2, "threads": 384,
            "stages": stages, "barriers": 1,
            "shared": 4 * stages * (bm * bk + bk * (bn + 8)) + 1024 + barrier_bytes * stages,
            "instruction": f"wgmma.m64n{bm}k8", "per_sm": 1}


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


# docs/gemm.md, "Matrix-vector plans" (src/planner/gemv.h's constants)
GEMV_THREADS = 256          # threads of a block, both kernels
GEMV_ROWS_PER_BLOCK = 8     # n = 1: a warp per row of A
GEMV_BLOCKS_PER_SM = 4      # what a k split aims at
GEMV_MIN_GRANULES = 4       # the shortest chunk of k a split gives a block
GEMV_COLUMN_GRANULE = 4     # m = 1: rows of B a chunk is a multiple of
GEMV_COMBINE_THREADS = 256  # the second launch: a thread per output


# The realizations the matrix-vector rule has taken: the fp32 ones at first (records without
# `gemv_realizations`), then every one (`tensor` too: cuBLAS, allowed TF32, runs the same kernel
# as without it at m or n = 1, evidence/2026-12-07-h100-gemv-every-realization).
GEMV_REALIZATIONS_FIRST = ("simt", "tensor-3xtf32")
GEMV_REALIZATIONS_KNOWN = (["simt", "tensor", "tensor-3xtf32"],)


def gemv_expected(a, record):
    """The matrix-vector kind the rule gives: rows for n = 1, columns for m = 1, under the
    realizations the record's rule takes and the rule's block; None for a tiled plan."""
    m, n = record["m"], record["n"]
    realizations = record.get("gemv_realizations", GEMV_REALIZATIONS_FIRST)
    if "gemv_realizations" in record:
        a.same("plan.gemv_realizations (a list a build used)",
               realizations in GEMV_REALIZATIONS_KNOWN, True)
    if record["profile"] != "rule" or record["realization"] not in realizations:
        return None
    return "rows" if n == 1 else "columns" if m == 1 else None


def gemv_split(k, grid, granule, sms):
    """k whole where the outputs' blocks give every multiprocessor one; else chunks of whole
    granules, at least GEMV_MIN_GRANULES, for about GEMV_BLOCKS_PER_SM blocks an SM."""
    chunk = k
    if grid < sms:
        wanted = ceil_div(GEMV_BLOCKS_PER_SM * sms, grid)
        chunk = max(ceil_div(ceil_div(k, wanted), granule) * granule, GEMV_MIN_GRANULES * granule)
    chunk = min(chunk, k)
    return chunk, ceil_div(k, chunk)


def audit_split_kernels(a, case, threads, blocks, launches, combine_blocks):
    """The kernels the native provider recorded launching: tb_main over the plan's blocks of
    `threads`, then, where k is split, tb_combine over its combine blocks."""
    kernels = (case.get("provider_details") or {}).get("kernels")
    if kernels is None:
        return
    expected = [("tb_main", threads, blocks)]
    if launches == 2:
        expected.append(("tb_combine", GEMV_COMBINE_THREADS, combine_blocks))
    a.same("provider_details.kernels (name, threads, blocks)",
           [[kr.get("name"), kr.get("threads_per_block"), kr.get("blocks")] for kr in kernels],
           [list(e) for e in expected])


def audit_gemv_plan(a, record, case, kind):
    """A matrix-vector plan, every fact re-derived from the shape, the view and the
    multiprocessors: rows (n = 1): a warp per row of A, 8 rows a block, granules of 32 x
    vector_width values of a row; columns (m = 1): a thread per vector_width columns of B,
    granules of 4 rows; no shared memory, no barrier; a k split adds a second launch."""
    m, n, k, sms = record["m"], record["n"], record["k"], record["multiprocessors"]
    packed = case["input_view"]["kind"] == "packed"
    # 4-float loads where the matrix's rows start on 16 bytes and, for rows, the vector (B's
    # column) is contiguous: packed, k % 4 == 0, n % 4 == 0 or n == 1
    vw = 4 if packed and k % 4 == 0 and (n % 4 == 0 or n == 1) else 1
    a.same("plan.rule (the matrix-vector rule)", "matrix-vector" in record["rule"], True)
    if kind == "rows":
        bm, bn, grid_m, grid_n = GEMV_ROWS_PER_BLOCK, 1, ceil_div(m, GEMV_ROWS_PER_BLOCK), 1
        thread, warps, granule, outputs = (0, 0), (GEMV_ROWS_PER_BLOCK, 1), 32 * vw, m
    else:
        bm, bn, grid_m = 1, GEMV_THREADS * vw, 1
        grid_n = ceil_div(n, bn)
        thread, warps, granule, outputs = (1, vw), (0, 0), GEMV_COLUMN_GRANULE, n
    chunk, splits = gemv_split(k, grid_m * grid_n, granule, sms)
    blocks = grid_m * grid_n * splits
    launches = 2 if splits > 1 else 1
    a.same("plan.vector_width", record["vector_width"], vw)
    a.same("plan.tile", record["tile"], {"block_m": bm, "block_n": bn, "block_k": chunk,
                                         "thread_m": thread[0], "thread_n": thread[1],
                                         "warps_m": warps[0], "warps_n": warps[1]})
    a.same("plan.k_chunk", record["k_chunk"], chunk)
    a.same("plan.k_splits", record["k_splits"], splits)
    for key, value in (("instruction", "fma"), ("threads", GEMV_THREADS), ("stages", 0),
                       ("shared_bytes", 0), ("barrier_sites", 0), ("warpgroups", 0),
                       ("blocks_per_multiprocessor", GEMV_BLOCKS_PER_SM), ("grid_m", grid_m),
                       ("grid_n", grid_n), ("thread_blocks", blocks),
                       ("waves", ceil_div(blocks, sms)), ("launches", launches),
                       ("pack_blocks", 0),
                       ("workspace_floats", splits * outputs if launches == 2 else 0),
                       ("combine_blocks",
                        ceil_div(outputs, GEMV_COMBINE_THREADS) if launches == 2 else 0)):
        a.same(f"plan.{key}", record[key], value)
    audit_split_kernels(a, case, GEMV_THREADS, blocks, launches, record["combine_blocks"])
    return {"mapping": "gemm", "barriers": 0}


def audit_gemm_plan(a, record, case, device_capability):
    """The tile rule of each realization, re-derived with every derived fact.
    Records from before the wgmma kernel carry no `instruction`: their tensor
    plans are mma.sync's whatever the device. Fields a kernel generation did
    not record yet are not asked of it: records made before the matrix-vector
    rule carry no `gemv` and were planned tiled whatever their m and n."""
    m, n, k, realization = record["m"], record["n"], record["k"], record["realization"]
    a.same("plan.realization", realization, case.get("realization"))
    if "gemv" in record:
        kind = gemv_expected(a, record)
        a.same("plan.gemv", record["gemv"], kind)
        if kind is not None:
            return audit_gemv_plan(a, record, case, kind)
    warpgroup_mma = "instruction" in record and device_capability == "9.0"
    packed = case["input_view"]["kind"] == "packed"
    # A's rows aligned where k is a multiple of 4, B's (and the output's) where n is
    a_width, b_width = (4 if packed and k % 4 == 0 else 1), (4 if packed and n % 4 == 0 else 1)
    bm, bn, bk = gemm_rule_tile(record, warpgroup_mma, a_width == 1 or b_width == 1)
    # TMA copies rows that start on 16 bytes (both operands'); records from before the
    # single-launch kernel carry no tensor_maps, and a user block takes it where the
    # driver could encode the maps (the record says whether it could)
    tma = warpgroup_mma and realization == "tensor" and a_width == 4 and b_width == 4 and \
        is_wgmma_tma_tile(bm, bn, bk) and ("tensor maps" in record["rule"] or (
            record["profile"] == "user-block" and record.get("tensor_maps", False)))
    if "tensor_maps" in record:
        a.same("plan.tensor_maps", record["tensor_maps"], tma)
    wgmma = warpgroup_mma and realization == "tensor" and not tma and is_wgmma_tile(bm, bn, bk)
    if realization == "simt":
        f = simt_facts(a, record, bm, bn, bk)
    elif tma:
        f = wgmma_tma_facts(record, bm, bn, bk)
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
    if "a_vector_width" in record:  # recorded since each operand is loaded at its own width
        a.same("plan.a_vector_width", record["a_vector_width"], a_width)
        a.same("plan.vector_width", record["vector_width"], b_width)
    else:
        a.same("plan.vector_width", record["vector_width"], min(a_width, b_width))
    grid_m, grid_n = ceil_div(m, bm), ceil_div(n, bn)
    sms = record["multiprocessors"]
    # the single-launch kernel's split of k under a wave (rules that say so), else k whole
    splits, chunk = gemm_tma_split(k, bk, grid_m * grid_n, sms, "two only" in record["rule"]) \
        if tma and record["profile"] == "rule" and "k split in chunks" in record["rule"] else (1, k)
    if "k_splits" in record:
        a.same("plan.k_splits", record["k_splits"], splits)
        a.same("plan.k_chunk", record["k_chunk"], chunk)
        a.same("plan.combine_blocks", record["combine_blocks"],
               ceil_div(m * n, GEMV_COMBINE_THREADS) if splits > 1 else 0)
    a.same("plan.grid_m", record["grid_m"], grid_m)
    a.same("plan.grid_n", record["grid_n"], grid_n)
    a.same("plan.thread_blocks", record["thread_blocks"], grid_m * grid_n * splits)
    a.same("plan.shared_bytes", record["shared_bytes"], f["shared"])
    a.same("plan.waves", record["waves"], ceil_div(grid_m * grid_n * splits, sms))
    a.same("plan.barrier_sites", record["barrier_sites"], f["barriers"])
    if "launches" in record:
        # wgmma packs A and B (rounded to TF32, zeros past the edges) in a first launch:
        # a chunk of bm x bk and of bn x bk per block; a split k adds its partials in a second
        tiles = ceil_div(k, bk)
        a.same("plan.launches", record["launches"], 2 if wgmma or splits > 1 else 1)
        a.same("plan.pack_blocks", record["pack_blocks"], (grid_m + grid_n) * tiles if wgmma else 0)
        a.same("plan.workspace_floats", record["workspace_floats"],
               (grid_m * bm + grid_n * bn) * tiles * bk if wgmma else
               splits * m * n if splits > 1 else 0)
    if splits > 1:
        audit_split_kernels(a, case, f["threads"], grid_m * grid_n * splits, 2,
                            record["combine_blocks"])
    return {"mapping": "gemm", "barriers": f["barriers"]}


# The single-launch wgmma kernel's split of k (src/planner/gemm.c, split_k)
GEMM_SPLIT_MIN_TILES = 4
# Two chunks only of at least this many k tiles, where the rule text says "two only" (since the
# split's A/B, evidence/2026-12-07-h100-gemm-wgmma-split-k); the build before split 1024^3 in two.
GEMM_SPLIT_PAIR_MIN_TILES = 64


def gemm_tma_split(k, bk, grid, sms, pair_floor):
    """k splits and k_chunk: chunks of whole k tiles, at least GEMM_SPLIT_MIN_TILES, as many
    as keep grid x splits within one wave, and (pair_floor: rules that say "two only") two
    only of at least GEMM_SPLIT_PAIR_MIN_TILES; (1, k) where that leaves fewer than 2."""
    tiles = ceil_div(k, bk)
    splits = min(sms // grid, tiles // GEMM_SPLIT_MIN_TILES)
    if splits < 2:
        return 1, k
    chunk_tiles = ceil_div(tiles, splits)
    chunks = ceil_div(tiles, chunk_tiles)
    if pair_floor and chunks == 2 and chunk_tiles < GEMM_SPLIT_PAIR_MIN_TILES:
        return 1, k
    return chunks, chunk_tiles * bk


# The elementwise rule by size (docs/planner.md, "Elementwise"): up to a threshold of elements in
# all, one element a thread in blocks of 128; over it 4 consecutive ones in blocks of 256. The
# thresholds builds have used: 8192 since fa3cbf2, 16384 in e1f587c (the rule's first build,
# measured in evidence/2026-12-06-h100-elementwise-tree-merge).
ELEMENTWISE_SCALAR_MAX_KNOWN = (8192, 16384)
# Records that carry groups_per_thread come from a build measured and not kept (34395a7,
# evidence/2026-12-07-h100-elementwise-flat-groups, in history): a packed matrix over the
# threshold, walked as one row, took this many float4 groups a thread, a block apart, in blocks
# of this many threads.
ELEMENTWISE_FLAT_GROUPS, ELEMENTWISE_FLAT_THREADS = 2, 128


# The case fields a plan record repeats: it is re-derived from its own copy.
PLAN_CASE_FIELDS = {"elementwise": ("m", "n"), "gemm": ("m", "n", "k"),
                    "row_reduction": ("op", "m", "n", "variant")}


def audit_plan(a, record, case, device_capability):
    for key in PLAN_CASE_FIELDS[record["kind"]]:
        a.same(f"plan.{key} (the case's)", record[key], case.get(key))
    if record["kind"] == "gemm":
        return audit_gemm_plan(a, record, case, device_capability)
    if record["kind"] == "elementwise":
        # Packed rows are walked as one row of m*n; records made before that
        # rule carry no "flat" and were planned row by row.
        flat = "flat" in record and case["input_view"]["kind"] == "packed"
        if "flat" in record:
            a.same("plan.flat", record["flat"], flat)
        n, m = (record["m"] * record["n"], 1) if flat else (record["n"], record["m"])
        # Since the rule by size (recorded with its threshold), small matrices
        # take one element a thread in blocks of 128; before it, 4 and 256.
        scalar = record.get("scalar_max_elements")
        if scalar is not None:
            a.same("plan.scalar_max_elements (a threshold a build used)",
                   scalar in ELEMENTWISE_SCALAR_MAX_KNOWN, True)
        one = scalar is not None and record["m"] * record["n"] <= scalar
        per, threads = (1, 128) if one else (4, 256)
        if "groups_per_thread" in record:  # the build not kept (ELEMENTWISE_FLAT_GROUPS)
            groups = ELEMENTWISE_FLAT_GROUPS if flat and not one else 1
            a.same("plan.groups_per_thread", record["groups_per_thread"], groups)
            if groups > 1:
                per, threads = 4 * groups, ELEMENTWISE_FLAT_THREADS
        a.same("plan.elements_per_thread", record["elements_per_thread"], per)
        a.same("plan.threads_per_block", record["threads_per_block"], threads)
        tpr = -(-n // per)
        a.same("plan.threads_per_row", record["threads_per_row"], tpr)
        a.same("plan.thread_blocks", record["thread_blocks"], -(-(m * tpr) // threads))
        return None
    a.same("plan.profile (a known cost profile)", record["profile"] in BLOCK_WEIGHT, True)
    if "block_weight" in record["constants"]:  # recorded since the calibrated profile
        a.same("plan.constants.block_weight", record["constants"]["block_weight"],
               BLOCK_WEIGHT[record["profile"]])
    if "cluster_shared_bytes" in record["constants"]:  # recorded since chunks in shared memory
        a.same("plan.constants.cluster_shared_bytes", record["constants"]["cluster_shared_bytes"],
               CLUSTER_SHARED_BYTES)
    if "cluster_shared_with_weight" in record["constants"]:  # recorded since the norms stream
        # false while the norms' long rows streamed (3e0be6f on), true since their output pass
        # loads the weight in batches (2bce1c6): the rule re-derives by the recorded value
        a.same("plan.constants.cluster_shared_with_weight is a boolean",
               isinstance(record["constants"]["cluster_shared_with_weight"], bool), True)
    if "cluster_shared_weight_min_blocks" in record["constants"]:  # recorded since its floor
        a.same("plan.constants.cluster_shared_weight_min_blocks",
               record["constants"]["cluster_shared_weight_min_blocks"], CLUSTER_SHARED_WEIGHT_MIN_BLOCKS)
    if "split_last_block_merges" in record["constants"]:  # recorded since the one launch
        a.same("plan.constants.split_last_block_merges", record["constants"]["split_last_block_merges"],
               True)
    if "persistent_blocks_per_sm" in record["constants"]:  # recorded since persistent rows
        for key, value in (("persistent_blocks_per_sm", PERSISTENT_BLOCKS_PER_SM),
                           ("persistent_shared_bytes", PERSISTENT_SHARED_BYTES),
                           ("persistent_param_bytes", PERSISTENT_PARAM_BYTES)):
            if key in record["constants"]:  # each recorded since its build (above)
                a.same(f"plan.constants.{key}", record["constants"][key], value)
    if "subwarp_max_row" in record["constants"]:  # recorded since subwarp rows
        for key, value in (("subwarp_max_row", SUBWARP_MAX_ROW), ("subwarp_slots", SUBWARP_SLOTS),
                           ("subwarp_threads", SUBWARP_THREADS)):
            a.same(f"plan.constants.{key}", record["constants"].get(key), value)
    overhead = record["constants"]["register_overhead"]
    if overhead not in EARLIER_OVERHEADS.get(record["op"], set()):
        a.same("plan.constants.register_overhead", overhead, OVERHEAD[record["op"]])
    preferences = audit_preference_constants(a, record)
    plan = expected_plan(record)
    if not preferences:  # records before calibrated-2 carry no preference facts
        for c in plan["candidates"] + [plan[k] for k in ("selected", "fixed") if plan.get(k)]:
            for key in PREFERENCE_FACTS:
                c.pop(key, None)
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
    if "subwarp" in plan:
        recorded = record.get("subwarp")
        a.same("plan.subwarp (an object)", isinstance(recorded, dict), True)
        for key, value in plan["subwarp"].items():
            a.same(f"plan.subwarp.{key}", recorded.get(key), value, rel=1e-12)
    elif "subwarp" in record:
        a.same("plan.subwarp (null but for subwarp rows)", record["subwarp"], None)
    return plan


# ---- files: regular files only, and a bounded number of bytes --------------------------

RESULTS_CAP = 512 * 2 ** 20   # a results file, decompressed (the largest evidence: 16 MB)
SOURCE_CAP = 4 * 2 ** 20      # an archived kernel source (a few tens of kB)
ARTIFACT_CAP = 4 * 2 ** 30    # an executable or library hashed by --check-current-artifacts
CHUNK = 2 ** 20


class Unreadable(Exception):
    """A file the audit does not read: absent, not a regular file, or over its cap."""


FILE_TYPES = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
              (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
              (stat.S_ISSOCK, "a socket"))


def open_regular(path):
    """A binary file object for path, only if it is a regular file. The open does not block
    (O_NONBLOCK: a FIFO would wait for a writer forever; reads of a regular file ignore it)
    and fstat then refuses FIFOs, devices, sockets and directories, whatever a symbolic
    link pointed at."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise Unreadable(f"cannot open {path}: {e.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((name for test, name in FILE_TYPES if test(mode)), "something else")
        raise Unreadable(f"{path} is {kind}, not a regular file")
    return os.fdopen(fd, "rb")


def read_capped(f, cap, name, keep=True):
    """The bytes of f, read in chunks, refused past cap bytes (only counted if not keep)."""
    chunks, total = [], 0
    while True:
        chunk = f.read(CHUNK)
        if not chunk:
            return b"".join(chunks) if keep else total
        total += len(chunk)
        if total > cap:
            raise Unreadable(f"{name} holds more than the {cap >> 20} MiB the audit reads")
        if keep:
            chunks.append(chunk)


def read_regular(path, cap):
    with open_regular(path) as f:
        # refused unread when already too large; read_capped still counts, as the file may
        # grow while it is read
        if os.fstat(f.fileno()).st_size > cap:
            raise Unreadable(f"{path} holds more than the {cap >> 20} MiB the audit reads")
        return read_capped(f, cap, path)


def read_gzip(path, cap):
    """The decompressed bytes of a .gz. Measured first without keeping them, so that a small
    file inflating past the cap (a gzip bomb) is refused without holding what it inflates to."""
    with open_regular(path) as raw:
        try:
            with gzip.GzipFile(fileobj=raw, mode="rb") as f:
                read_capped(f, cap, f"{path} decompressed", keep=False)
            raw.seek(0)
            with gzip.GzipFile(fileobj=raw, mode="rb") as f:
                return read_capped(f, cap, f"{path} decompressed")
        except (EOFError, gzip.BadGzipFile, zlib.error) as e:  # truncated or foreign
            raise Unreadable(f"{path}: not a complete gzip file ({e})") from None


def file_sha256(path, cap):
    """SHA-256 of a regular file, hashed in chunks."""
    digest, total = hashlib.sha256(), 0
    with open_regular(path) as f:
        while chunk := f.read(CHUNK):
            total += len(chunk)
            if total > cap:
                raise Unreadable(f"{path} holds more than the {cap >> 30} GiB the audit hashes")
            digest.update(chunk)
    return digest.hexdigest()


def results_path(run_dir):
    """results.json, or results.json.gz where committed evidence stores a large run compressed
    (lexists: whatever is there under the name is refused or read, never skipped)."""
    path = os.path.join(run_dir, "results.json")
    return path if os.path.lexists(path) or not os.path.lexists(path + ".gz") else path + ".gz"


def read_results(path):
    """The results file's bytes (decompressed: its digest is the written file's)."""
    return read_gzip(path, RESULTS_CAP) if path.endswith(".gz") else read_regular(path, RESULTS_CAP)


def refuse_constant(name):
    raise ValueError(f"{name} is no JSON number (the C side writes null for it)")


def parse_results(raw):
    """The document, or Malformed: not UTF-8 JSON, NaN or Infinity, an integer of more
    digits than Python converts, or nesting deeper than the recursion limit."""
    try:
        return json.loads(raw, parse_constant=refuse_constant)
    except RecursionError:
        raise Malformed("nested too deeply for a results file") from None
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError among them
        raise Malformed(f"not a JSON document ({short(str(e), 160)})") from None


# ---- sources -------------------------------------------------------------------

# How many directories above a run the archived sources are looked for.
SOURCE_STORE_LEVELS = 8


def archived_source(run_dir, sha):
    """Where the source named by its SHA-256 is archived: the run's own sources/, else the
    sources/ of the nearest ancestor directory (committed evidence keeps one content-addressed
    store, evidence/sources/, for all its runs), at most SOURCE_STORE_LEVELS levels up; None
    when none holds it. The caller still checks the file's digest against the name."""
    directory = os.path.abspath(run_dir)
    for _ in range(SOURCE_STORE_LEVELS + 1):
        # a run's own sources are plain; the committed store keeps them gzip-compressed
        for name in (sha + ".cu", sha + ".cu.gz"):
            path = os.path.join(directory, "sources", name)
            if os.path.lexists(path):
                return path
        parent = os.path.dirname(directory)
        if parent == directory:  # the filesystem root
            break
        directory = parent
    return None


def audit_source(a, run_dir, case, plan):
    sha = case.get("source_sha256")
    if sha is None:
        return
    path = archived_source(run_dir, sha)
    if path is None:
        a.fail("source_sha256", f"no archived source {sha}.cu in {run_dir}/sources "
               "or the sources/ of a directory above it")
    try:
        text = read_gzip(path, SOURCE_CAP) if path.endswith(".gz") else read_regular(path, SOURCE_CAP)
    except Unreadable as e:
        a.malformed("source_sha256 (the archived file)", str(e))
    a.same("source_sha256 (hash of the archived file, decompressed)", sha,
           hashlib.sha256(text).hexdigest())
    try:
        source = text.decode()
    except UnicodeDecodeError:
        a.malformed("source", f"{path} is not UTF-8 text")
    if plan is None:  # elementwise
        a.same("source: barriers", source.count("__syncthreads()"), 0)
        return
    if plan["mapping"] == "gemm":
        a.same("source: barriers", source.count("__syncthreads()"), plan["barriers"])
        return
    facts = {"register_rows": "selected", "subwarp_rows": "subwarp"}.get(plan["mapping"], "stream")
    expected = plan[facts]["barrier_sites"]
    a.same("source: __syncthreads() sites vs plan barrier sites", source.count("__syncthreads()"), expected)
    subwarp = plan["mapping"] == "subwarp_rows"
    lanes = f"#define LANES {plan['subwarp']['lanes']}\n" if subwarp else "#define LANES "
    a.same("source: lanes a row as planned (subwarp rows only)", lanes in source, subwarp)
    clustered = plan["mapping"] == "cluster_row"
    dims = f"__cluster_dims__({plan['stream']['cluster_blocks']}, 1, 1)" if clustered else "__cluster_dims__"
    a.same("source: cluster dimensions as planned", dims in source, clustered)
    if clustered:
        # the facts of a push say st.async, a read's say none; a fetch's say either: 0eef128
        # pushed with the fetch's facts (its block barrier after the wait kept)
        stream, words = plan["stream"], STAT_WORDS[case["op"]]
        generation = cluster_generation(stream, combine_bytes(words, stream["threads_per_block"]),
                                        words)
        if generation != "fetch":
            a.same("source: the row's statistics pushed (st.async) as the record's facts say",
                   "st.async" in source, generation == "push")
    shared = plan["stream"].get("cache_shared_bytes", 0) > 0 if clustered else False
    a.same("source: the chunk cached in shared memory iff planned", "#define CHUNK_SHARED 1" in source,
           shared)
    if plan["mapping"] == "split_row" and "#define ROW_OUTPUT" in source:  # since the one launch
        a.same("source: the split row's launches as planned (ROW_OUTPUT 0: one, 1: two)",
               f"#define ROW_OUTPUT {int(plan['stream']['launches'] == 2)}\n" in source, True)
    persistent = plan["mapping"] == "persistent_row"
    groups = f"#define ROW_GROUPS {plan['stream']['row_groups']}LL\n" if persistent else "#define ROW_GROUPS"
    a.same("source: row groups as planned (persistent rows only)", groups in source, persistent)
    if persistent:
        a.same("source: the row's statistics exchanged as tagged words iff the record's facts say so",
               "st.relaxed.gpu.global.u64" in source and "atomicAdd" not in source,
               persistent_tagged(plan["stream"]))
    # the ring (since e0478e9; before it the chunk alone, at most 98304 bytes)
    if persistent and plan["stream"]["cache_shared_bytes"] == PERSISTENT_SHARED_BYTES:
        stream = plan["stream"]
        ring = (f"#define GROUPS {-(-stream['chunk_elements'] // (4 * stream['threads_per_block']))}\n"
                f"#define RING {stream['cache_shared_bytes'] // (16 * stream['threads_per_block'])}\n")
        a.same("source: each thread's groups and ring slots as planned", ring in source, True)
    shared = shared or persistent
    kernels = (case.get("provider_details") or {}).get("kernels")
    if kernels:  # a row reduction asks for dynamic shared memory only for a chunk kept there
        a.same("provider_details.kernels[0].dynamic_shared_bytes (the chunk's cache, else 0)",
               kernels[0].get("dynamic_shared_bytes"),
               plan["stream"]["cache_shared_bytes"] if shared else 0)
    if clustered and case["op"] != "sum":
        a.same("source: the chunk cached in registers iff one memory pass is planned without shared",
               "#define ITERS" in source, plan["stream"]["memory_passes"] == 1 and not shared)
    if "#define EVEN_COUNTS 1" in source:
        # merges that take every count equal (layernorm's halves) are right only where every
        # thread holds a full share of its row; sources before the define have none
        stream = plan["stream"]
        a.same("source: EVEN_COUNTS only where every thread of a cluster row holds full groups",
               clustered and "#define ITERS" in source
               and stream["chunk_elements"] % (4 * stream["threads_per_block"]) == 0
               and stream["chunk_elements"] * stream["blocks_per_row"] == case["n"], True)
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


def audit_replay(a, doc, path):
    replay, info = doc["replay"], doc["run"]["replay"]
    rounds = info["rounds"]
    ref, cand = info["reference"], info["candidate"]
    a.where = f"{path} replay"
    a.same("rounds", replay["rounds"], rounds)
    a.same("reference", replay["reference"], ref)
    a.same("candidate", replay["candidate"], cand)
    orders = info["variant_order"]
    a.same("run.replay.variant_order (count)", len(orders), rounds)
    firsts = [o[0] if o else None for o in orders]
    a.same("position balance: rounds with the reference first", firsts.count(ref), rounds // 2)
    a.same("position balance: rounds with the candidate first", firsts.count(cand), rounds // 2)
    audit_variant_order(a, info)
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
        a.where = f"{path} replay {printable(key)}"
        for r in range(rounds):
            for v in (ref, cand):
                if (v, r) not in table[key]:
                    a.fail("cases", f"{v} round {r} is missing")
        for metric in METRICS:
            refs = [metric_value(table[key][(ref, r)], metric) for r in range(rounds)]
            cands = [metric_value(table[key][(cand, r)], metric) for r in range(rounds)]
            audit_gains(a, entry["metrics"][metric], metric, refs, cands, counts[metric])
            audit_replay_interval(a, entry["metrics"][metric], metric,
                                  [table[key][(ref, r)] for r in range(rounds)],
                                  [table[key][(cand, r)] for r in range(rounds)], GAIN_DECISIONS)
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
        if doc["schema_version"] >= 4:
            audit_per_call(a, entry, table[key], frameworks.get(key.rsplit("/", 1)[0], {}),
                           (ref, cand), rounds)
    a.where = f"{path} replay"
    for metric in METRICS:
        for k, v in counts[metric].items():
            a.same(f"counts.{metric}.{k}", replay["counts"][metric][k], v)
    a.same("model_predicts_candidate_better (count)", replay["model_predicts_candidate_better"], predicted)
    a.same("native_over_framework_counts", replay.get("native_over_framework_counts", {}), versus_counts)
    if doc["schema_version"] >= 4:
        a.same("method", replay.get("method"), REPLAY_METHOD)
    audit_provider_balance(a, doc["cases"], rounds)


def audit_gains(a, rec, metric, refs, cands, count):
    """One metric of a paired case: the rounds' p50s, gains, their range and the verdict."""
    rounds = len(refs)
    count["cases"] += 1
    for name, values in (("reference_p50_ns", refs), ("candidate_p50_ns", cands)):
        a.same(f"{metric}.{name} (count)", len(rec[name]), rounds)
        for r in range(rounds):
            a.same(f"{metric}.{name}[{r}]", rec[name][r], values[r])
    # a round's gain needs both values and a positive candidate (as the C side: else the
    # gain is not finite and the figures are withheld)
    if any(x is None or y is None or not y > 0 for x, y in zip(refs, cands)):
        if rec["withheld"] is None:
            a.fail(f"{metric}.withheld", "a round lacks its pair but figures are shown")
        count["withheld"] += 1
        return
    if rec["withheld"] is not None:
        a.fail(f"{metric}.withheld", "every round has its pair but the figures are withheld")
    gains = [x / y for x, y in zip(refs, cands)]
    a.same(f"{metric}.gain (count)", len(rec["gain"]), rounds)
    for r, g in enumerate(gains):
        a.same(f"{metric}.gain[{r}]", rec["gain"][r], g)
    a.same(f"{metric}.median", rec["median"], median(gains))
    a.same(f"{metric}.min", rec["min"], min(gains))
    a.same(f"{metric}.max", rec["max"], max(gains))
    verdict = ("faster in all pairs" if min(gains) > 1 else
               "slower in all pairs" if max(gains) < 1 else "inconclusive")
    a.same(f"{metric}.verdict", rec["verdict"], verdict)
    count["positive_median"] += median(gains) > 1
    count["all_pairs_positive"] += min(gains) > 1
    count["all_pairs_negative"] += max(gains) < 1


def audit_variant_order(a, info):
    """The variant measured first alternates round by round, the reference first in round 0."""
    ref, cand = info["reference"], info["candidate"]
    for r, o in enumerate(info["variant_order"]):
        a.same(f"run.replay.variant_order[{r}]", o, [ref, cand] if r % 2 == 0 else [cand, ref])


def audit_versus(a, entry, native, frameworks, ref, cand, rounds, counts):
    """ratio_r = native_r / framework_r per variant and metric (docs/method.md §3)."""
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
                a.same(f"{field}.ratio (count)", len(rec["ratio"]), rounds)
                for r, x in enumerate(ratios):
                    a.same(f"{field}.ratio[{r}]", rec["ratio"][r], x)
                a.same(f"{field}.median", rec["median"], median(ratios))
                verdict = ("native faster in all pairs" if max(ratios) < 1 else
                           "native slower in all pairs" if min(ratios) > 1 else "inconclusive")
                a.same(f"{field}.verdict", rec["verdict"], verdict)
                audit_replay_interval(a, rec, field, [native[(variant, r)] for r in range(rounds)],
                                      [per_round[r] for r in range(rounds)], TIME_DECISIONS)
                count["native_faster_in_all_pairs"] += max(ratios) < 1
                count["native_slower_in_all_pairs"] += min(ratios) > 1


# ---- replay intervals (schema 4; docs/method.md §3.2) ------------------------------
#
# Re-derived from the raw samples on this side's own arithmetic: the order-statistic
# interval of the median of the per-round ratios (sign test), each side's noise (the
# median over rounds of 1.4826 MAD / median of a record's samples), the band
# max(2 %, noise) and the decision of the interval against it.

INTERVAL_LEVEL = 0.95
BAND_FLOOR = 0.02
REPLAY_METHOD = {"interval": "order statistics of the per-round ratios (sign test)",
                 "level": INTERVAL_LEVEL, "band_floor": BAND_FLOOR,
                 "noise": "median over rounds of 1.4826 MAD / median of each record's samples",
                 "seed": None}
# (below the band, above it, inside it, neither): gains above 1 are the candidate faster,
# native / framework ratios below 1 native faster
GAIN_DECISIONS = ("SLOWER", "FASTER", "SAME", "INCONCLUSIVE")
TIME_DECISIONS = ("FASTER", "SLOWER", "SAME", "INCONCLUSIVE")


def sign_rank(n):
    """(k, coverage): the largest k with P(Binomial(n, 1/2) <= k - 1) <= 2.5 %, exactly;
    with none, k = 1 ([min, max]) and its own coverage 1 - 2^(1-n)."""
    tail = (1 - INTERVAL_LEVEL) / 2
    below, k = 0, 0  # below: 2^n P(U <= k - 1), an integer
    while k <= n and (below + math.comb(n, k)) / 2 ** n <= tail:
        below += math.comb(n, k)
        k += 1
    if k == 0:
        return 1, 1 - 2.0 ** (1 - n)
    return k, 1 - 2 * below / 2 ** n


def robust_cv(values):
    values = [v for v in values if is_number(v)]
    mid = median(values)
    if mid is None or not mid > 0:
        return None
    return 1.4826 * median([abs(v - mid) for v in values]) / mid


def metric_samples(case, metric):
    """The raw per-call samples behind metric_value, or None."""
    if metric.startswith("gpu"):
        device = case["device"]
        if device is None or not device["control_complete"]:
            return None
        return device["throughput" if metric.endswith("throughput") else "latency"]["control"]["per_call_ns"]
    if case["host"] is None:
        return None
    return case["host"]["throughput" if metric.endswith("throughput") else "latency"]["per_call_ns"]


def side_noise(records, metric):
    cvs = [robust_cv(metric_samples(r, metric) or []) for r in records]
    return median([c for c in cvs if c is not None])


def audit_replay_interval(a, rec, field, firsts, seconds, words):
    """The interval, noise, band and decision of one shown ratio range (schema 4 records;
    older ones have none). `rec` already passed audit_gains / audit_versus."""
    if rec["withheld"] is not None or "interval" not in rec:
        return
    ratios = rec["gain"] if "gain" in rec else rec["ratio"]
    metric = field.rsplit(".", 1)[-1]
    audit_interval_of(a, rec, field, ratios,
                      (side_noise(firsts, metric), side_noise(seconds, metric)), words)


def audit_interval_of(a, rec, field, ratios, noise, words):
    """A shown range's interval, its sides' noise, the band and the decision."""
    if "interval" not in rec:
        a.fail(f"{field}.interval", "missing in a schema 4 record")
    n = len(ratios)
    k, coverage = sign_rank(n)
    ordered = sorted(ratios)
    lo, hi = ordered[k - 1], ordered[n - k]
    a.same(f"{field}.interval.rank", rec["interval"]["rank"], k)
    a.same(f"{field}.interval.coverage", rec["interval"]["coverage"], coverage)
    a.same(f"{field}.interval.lo", rec["interval"]["lo"], lo)
    a.same(f"{field}.interval.hi", rec["interval"]["hi"], hi)
    a.same(f"{field}.noise.first", rec["noise"]["first"], noise[0])
    a.same(f"{field}.noise.second", rec["noise"]["second"], noise[1])
    w = max([BAND_FLOOR] + [x for x in noise if x is not None])
    a.same(f"{field}.band", rec["band"], w)
    below, above, inside, neither = words
    decision = (inside if lo >= 1 / (1 + w) and hi <= 1 + w else above if lo > 1 + w
                else below if hi < 1 / (1 + w) else neither)
    a.same(f"{field}.decision", rec["decision"], decision)


def per_call_figure(case, kind):
    """(scope name, samples) of a record's throughput in one kind of scope ("gap_free",
    "eager", "host"), or None: the gap-free figure is the control its gap_free names."""
    device, host = case["device"], case["host"]
    throughput = device["throughput"] if device is not None else None
    if kind == "gap_free":
        gap = (throughput or {}).get("gap_free")
        if gap is None:
            return None
        mode = gap["mode"]
        control = throughput["control"] if mode == "eager" else throughput["batch_modes"][mode]["control"]
        scope, samples = mode, (control or {}).get("per_call_ns") or []
    elif kind == "eager":
        if device is None or not device["control_complete"]:
            return None
        scope, samples = "eager", throughput["control"]["per_call_ns"]
    else:
        if host is None:
            return None
        scope, samples = "host", host["throughput"]["per_call_ns"]
    samples = [v for v in samples if is_number(v)]
    return (scope, samples) if samples else None


def audit_per_call(a, entry, native, frameworks, variants, rounds):
    """native_over_framework.*.*.per_call: per round native / framework per call in the first
    scope both sides have in every round (the gap-free one in one mode throughout), then its
    range, interval and decision."""
    for provider, per_round in frameworks.items():
        for variant in variants:
            field = f"native_over_framework.{provider}.{variant}.per_call"
            rec = entry["native_over_framework"][provider][variant].get("per_call")
            if rec is None:
                a.fail(field, "missing")
            chosen = None
            for kind in ("gap_free", "eager", "host"):
                pairs = [(per_call_figure(native[(variant, r)], kind),
                          per_call_figure(per_round[r], kind) if r in per_round else None)
                         for r in range(rounds)]
                if all(n and f and n[0] == f[0] == pairs[0][0][0] for n, f in pairs):
                    chosen = pairs
                    break
            if chosen is None:
                if rec["withheld"] is None:
                    a.fail(f"{field}.withheld", "no scope has both sides in every round")
                continue
            if rec["withheld"] is not None:
                a.fail(f"{field}.withheld", f"both sides have {chosen[0][0][0]} in every round")
            a.same(f"{field}.scope", rec.get("scope"), chosen[0][0][0])
            ratios = [median(n[1]) / median(f[1]) for n, f in chosen]
            a.same(f"{field}.ratio (count)", len(rec["ratio"]), rounds)
            for r, x in enumerate(ratios):
                a.same(f"{field}.ratio[{r}]", rec["ratio"][r], x)
            a.same(f"{field}.median", rec["median"], median(ratios))
            a.same(f"{field}.min", rec["min"], min(ratios))
            a.same(f"{field}.max", rec["max"], max(ratios))
            verdict = ("native faster in all pairs" if max(ratios) < 1 else
                       "native slower in all pairs" if min(ratios) > 1 else "inconclusive")
            a.same(f"{field}.verdict", rec["verdict"], verdict)
            noises = [median([c for c in (robust_cv(p[side][1]) for p in chosen) if c is not None])
                      for side in (0, 1)]
            audit_interval_of(a, rec, field, ratios, noises, TIME_DECISIONS)


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



# ---- campaigns: shards and merges (docs/campaigns.md) ---------------------------------

SHARD_RECORD_OVERHEAD_BYTES = 4 << 20
SHARD_COST_MAX = 2 ** 63 - 1
UINT64_MAX = 2 ** 64 - 1
COST_MODEL = "runs x (minimal_bytes + 4194304)"
# what each shard of one campaign shares exactly (as the merge holds them, src/cli/merge.c)
SHARED_FACTS = ("tool", "schema_version", "run.backend", "run.seed", "run.measure",
                "run.variants", "run.planner_profile", "run.matrix_realizations",
                "run.gemm_block", "run.skipped_pairs", "run.frozen", "run.replay.rounds",
                "run.replay.reference", "run.replay.candidate", "provenance.git",
                "provenance.host.os", "provenance.host.kernel", "provenance.host.machine",
                "provenance.host.cpu_model", "provenance.host.logical_cpus",
                "provenance.host.affinity_cpus", "provenance.gpu.available",
                "provenance.gpu.driver_cuda_version", "provenance.gpu.devices.0.name",
                "provenance.gpu.devices.0.compute_capability",
                "provenance.gpu.devices.0.multiprocessors", "provenance.gpu.devices.0.l2_bytes",
                "provenance.gpu.devices.0.memory_bytes",
                "provenance.gpu.devices.0.max_sm_clock_khz")
# the operations' inputs and outputs in fp32 elements (src/cases/ops.c):
# second m x n matrix, weight (n), bias (n), output a vector (m)
OP_SHAPES = {"sum": (False, False, False, True), "softmax": (False, False, False, False),
             "rmsnorm": (False, True, False, False), "layernorm": (False, True, True, False),
             "add": (True, False, False, False), "gelu_add": (True, False, False, False)}


def fnv1a64(text):
    h = 14695981039346656037
    for byte in text.encode():
        h = ((h ^ byte) * 1099511628211) & UINT64_MAX
    return h


def unit_of(case_id):
    """The campaign unit of a record: its id's first three segments, op/shape/view."""
    return "/".join(case_id.split("/")[:3])


def minimal_bytes(key):
    """Bytes a call must move (tb_op_minimal_bytes), from a unit key op/MxN[xK]/view."""
    op, dims = key.split("/")[:2]
    sizes = [int(x) for x in dims.split("x")]
    if op == "gemm":
        m, n, k = sizes
        return 4 * (m * k + k * n + m * n)
    m, n = sizes
    second, weight, bias, vector_out = OP_SHAPES[op]
    return 4 * (m * n * (2 if second else 1) + n * weight + n * bias + (m if vector_out else m * n))


def expected_cost(unit):
    per_run = minimal_bytes(unit["key"]) + SHARD_RECORD_OVERHEAD_BYTES
    return min(per_run * len(unit["records"]), SHARD_COST_MAX)


def deal(units, count):
    """tb_shard_assign (src/cases/shard.c), written again: the largest expected cost first,
    ties by the FNV-1a hash of the key, then the key, then the position; each unit to the
    shard with the least cost so far, the lowest index among equals."""
    order = sorted(range(len(units)), key=lambda u: (-units[u]["cost"], fnv1a64(units[u]["key"]),
                                                     units[u]["key"].encode(), u))
    load, dealt = [0] * count, [0] * len(units)
    for u in order:
        least = min(range(count), key=lambda s: (load[s], s))
        dealt[u] = least
        load[least] = min(load[least] + units[u]["cost"], UINT64_MAX)
    return dealt


def campaign_sha256(units):
    text = "".join(f"{u['key']}\t{u['cost']}\t{','.join(u['records'])}\n" for u in units)
    return hashlib.sha256(text.encode()).hexdigest()


def audit_campaign(a, record, field, count):
    """A campaign's units: each key once, its records its own, its cost the model's, the
    digest theirs, and each unit dealt to the shard the rule deals it to."""
    units = record["units"]
    a.same(f"{field}.cost_model", record.get("cost_model"), COST_MODEL)
    a.same(f"{field}.campaign_sha256 (of its units)", record["campaign_sha256"],
           campaign_sha256(units))
    if count > len(units):
        a.fail(f"{field}.units", f"{count} shards for {len(units)} units: one would be empty")
    keys, records = set(), set()
    for unit in units:
        key = unit["key"]
        if key in keys:
            a.fail(f"{field}.units", f"{printable(key)} appears twice")
        keys.add(key)
        parts = key.split("/")
        if len(parts) != 3 or parts[0] not in OPS or parts[2] not in VIEWS or not re.fullmatch(
                r"[1-9][0-9]*x[1-9][0-9]*(x[1-9][0-9]*)?", parts[1]) or (
                (parts[0] == "gemm") != (parts[1].count("x") == 2)):
            a.fail(f"{field}.units", f"{printable(key)} is no op/shape/view")
        if not unit["records"]:
            a.fail(f"{field}.units", f"{printable(key)} has no records")
        for rec in unit["records"]:
            if unit_of(rec) != key or rec in records:
                a.fail(f"{field}.units", f"{printable(rec)} under {printable(key)}")
            records.add(rec)
        a.same(f"{field}.units {printable(key)}.cost ({COST_MODEL})", unit["cost"],
               expected_cost(unit))
    dealt = deal(units, count)
    for unit, shard in zip(units, dealt):
        a.same(f"{field}.units {printable(unit['key'])}.shard (the rule's)", unit["shard"], shard)


def share(units, index, rounds):
    """Record id -> how many times shard `index` measures it (once per replay round)."""
    counts = {}
    for unit in units:
        if index is None or unit["shard"] == index:
            for rec in unit["records"]:
                counts[rec] = counts.get(rec, 0) + rounds
    return counts


def audit_partition(a, field, cases, expected, complete):
    """The records are exactly the expected ones (a subset while incomplete)."""
    got = {}
    for case in cases:
        got[case["id"]] = got.get(case["id"], 0) + 1
    for case_id, times in got.items():
        if times > expected.get(case_id, 0):
            a.fail(field, f"{printable(case_id)} measured {times} time(s), "
                   f"its share is {expected.get(case_id, 0)} (foreign or duplicated)")
    if complete:
        for case_id, times in expected.items():
            a.same(f"{field}: records of {printable(case_id)} (missing cases)",
                   got.get(case_id, 0), times)


def replay_rounds(doc):
    replay = doc["run"].get("replay")
    return replay["rounds"] if replay else 1


def audit_shard(a, path, doc):
    """A shard's own results: its campaign and its share. Returns its note."""
    record = doc["run"]["shard"]
    a.where = f"{path} run.shard"
    count, index = record["count"], record["index"]
    if index >= count:
        a.malformed("run.shard.index", f"{index} is not below the {count} shards")
    audit_campaign(a, record, "run.shard", count)
    audit_partition(a, "cases (the shard's share)", doc["cases"],
                    share(record["units"], index, replay_rounds(doc)), doc["run"]["complete"])
    return (f"tilebench audit: SHARD {path}: shard {index}/{count} of campaign "
            f"{record['campaign_sha256'][:12]} (its share only; tilebench merge joins them)")


def at_path(doc, dotted):
    value = doc
    for part in dotted.split("."):
        if isinstance(value, list):
            value = value[int(part)] if part.isdigit() and int(part) < len(value) else None
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
        if value is None:
            return None
    return value


def measured_on(doc):
    """The device a shard measured on, as the merge names it on each case."""
    prov, backend = doc["provenance"], doc["run"].get("backend")
    devices = (prov.get("gpu") or {}).get("devices") or [None]
    gpu = devices[0] if backend == "cuda" and isinstance(devices[0], dict) else None
    return {"backend": backend if isinstance(backend, str) else "?",
            "hostname": prov["host"].get("hostname"),
            "cuda_visible_devices": (prov.get("thread_env") or {}).get("CUDA_VISIBLE_DEVICES"),
            "gpu": None if gpu is None else {k: gpu.get(k) for k in ("ordinal", "name", "uuid")}}


def without_shard_keys(case):
    return {k: v for k, v in case.items() if k not in ("shard", "measured_on")}


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def audit_merge(a, path, run_dir, doc):
    """A merged run: every shard once, each shard's results file the one recorded, of the
    same campaign, build and kind of machine, and the merged cases exactly the shards'."""
    merge, count = doc["run"]["merge"], doc["run"]["merge"]["shard_count"]
    a.where = f"{path} run.merge"
    audit_campaign(a, merge, "run.merge", count)
    a.same("run.merge.shards (indices: every shard exactly once)",
           sorted(entry["index"] for entry in merge["shards"]), list(range(count)))
    rounds, units = replay_rounds(doc), merge["units"]
    a.where = f"{path} cases"
    audit_partition(a, "cases (the campaign)", doc["cases"], share(units, None, rounds), True)
    dealt = {unit["key"]: unit["shard"] for unit in units}
    by_shard = {i: [] for i in range(count)}
    for case in doc["cases"]:
        if "shard" not in case or "measured_on" not in case:
            a.fail(f"case {printable(case['id'])}", "a merged case names its shard and device")
        a.same(f"case {printable(case['id'])} shard (its unit's)", case["shard"],
               dealt[unit_of(case["id"])])
        by_shard[case["shard"]].append(case)
    first = None
    for entry in sorted(merge["shards"], key=lambda e: e["index"]):
        i = entry["index"]
        a.where = f"{path} run.merge.shards[{i}]"
        a.same("file", entry["file"], f"shards/{i}/results.json")
        shard_dir = os.path.join(run_dir, "shards", str(i))
        shard_path = results_path(shard_dir)
        if not os.path.lexists(shard_path):
            a.fail("file", f"{shard_path} is missing: a merged run keeps every shard's results")
        where = a.where
        raw, sdoc = load_run(a, shard_path)
        a.where = where
        a.same("results_sha256 (of the shard's file)", entry["results_sha256"],
               hashlib.sha256(raw).hexdigest())
        record = sdoc["run"].get("shard")
        if record is None:
            a.fail("file", f"{shard_path} is not a shard (no run.shard)")
        for key in ("campaign_argv", "campaign_sha256", "cost_model", "units"):
            a.same(f"shard's run.shard.{key} (the merge's: one campaign)",
                   canonical(record.get(key)), canonical(merge.get(key)))
        a.same("shard's run.shard.index", record["index"], i)
        a.same("shard's run.shard.count", record["count"], count)
        a.same("shard's run.complete", sdoc["run"]["complete"], True)
        a.same("valid_cases (the shard's)", entry["valid_cases"], sdoc["run"]["valid_cases"])
        device = measured_on(sdoc)
        a.same("measured_on (the shard's device)", canonical(entry["measured_on"]), canonical(device))
        for case in by_shard[i]:
            a.same(f"case {printable(case['id'])} measured_on (its shard's)",
                   canonical(case["measured_on"]), canonical(device))
        mine = sorted(canonical(without_shard_keys(c)) for c in by_shard[i])
        theirs = sorted(canonical(c) for c in sdoc["cases"])
        a.same("cases (the shard's records, as its file holds them)", len(mine), len(theirs))
        for m, t in zip(mine, theirs):
            if m != t:
                a.fail("cases", f"a merged record differs from the shard's: {short(m, 160)}")
        if first is None:
            first = sdoc
            a.same("provenance (the merged run's is shard 0's)", canonical(doc["provenance"]),
                   canonical(sdoc["provenance"]))
            continue
        for fact in SHARED_FACTS:
            a.same(f"{fact} (shard 0's: one campaign, build and kind of machine)",
                   canonical(at_path(sdoc, fact)), canonical(at_path(first, fact)))
        a.same("provenance.artifacts (shard 0's)",
               sorted(canonical(x) for x in sdoc["provenance"]["artifacts"]),
               sorted(canonical(x) for x in first["provenance"]["artifacts"]))
        env = {k: v for k, v in (sdoc["provenance"].get("thread_env") or {}).items()
               if k != "CUDA_VISIBLE_DEVICES"}
        env0 = {k: v for k, v in (first["provenance"].get("thread_env") or {}).items()
                if k != "CUDA_VISIBLE_DEVICES"}
        a.same("provenance.thread_env (shard 0's, but CUDA_VISIBLE_DEVICES)", canonical(env),
               canonical(env0))
    a.where = path
    a.same("run.valid_cases (the shards')", doc["run"]["valid_cases"],
           sum(entry["valid_cases"] for entry in merge["shards"]))
    return (f"tilebench audit: MERGED {path}: {count} shard(s) of campaign "
            f"{merge['campaign_sha256'][:12]}, each checked against its results file")

# ---- runs ------------------------------------------------------------------------

def printable(text, limit=120):
    """A record's string for a message line: cut short, and escaped unless plain ASCII."""
    if not isinstance(text, str):
        return short(text, limit)
    text = text if len(text) <= limit else text[:limit] + "..."
    return text if text.isascii() and text.isprintable() else repr(text)


def environment(doc):
    prov = doc["provenance"]
    gpu = prov.get("gpu") or {}
    devices = [(d.get("name"), d.get("compute_capability")) for d in gpu.get("devices", [])]
    executable = [x["sha256"] for x in prov["artifacts"] if x["role"] == "executable"]
    return {"os": prov["host"].get("os"), "cpu": prov["host"].get("cpu_model"),
            "gpu": devices, "driver": gpu.get("driver_cuda_version"), "executable": executable}


def run_capability(doc):
    """The compute capability of the run's device (ordinal 0), None without one."""
    devices = (doc["provenance"].get("gpu") or {}).get("devices") or [{}]
    return devices[0].get("compute_capability")


def expected_id(case):
    """tb_case_id (src/cases/case.c) from the case's own fields: op/dims/view/provider, then
    the realization of a gemm or the planner variant of a planned row reduction."""
    dims = f"{case['m']}x{case['n']}" + (f"x{case['k']}" if "k" in case else "")
    suffix = case["realization"] if case["op"] == "gemm" else case["variant"]
    parts = [case["op"], dims, case["input_view"]["kind"], case["provider"]]
    return "/".join(parts + ([suffix] if suffix is not None else []))


def audit_identity(a, case, seen):
    """The id re-derived, and unique within the run (once per round in a replay)."""
    planned = case["provider"] == "native" and case["op"] in REDUCTIONS
    a.same("variant (set exactly on the native provider's row reductions: they are planned)",
           case["variant"] is not None, planned)
    a.same("id (op/dims/view/provider[/suffix] of the case's fields)", case["id"], expected_id(case))
    key = (case["id"], case.get("round"))
    if key in seen:
        a.fail("id", f"{printable(case['id'])} appears twice"
               + (f" in round {case['round']}" if "round" in case else ""))
    seen.add(key)


def audit_plan_count(a, case):
    """Every native case carries its plan (the planner's record, the gemm kernel's or the
    elementwise plan), other providers none; gemm on the CPU backend runs no kernel plan.
    A valid case must have it: dropping a plan would skip every check of it."""
    expected = int(case["provider"] == "native" and (case["op"] != "gemm" or case["backend"] == "cuda"))
    count = len(case["execution_plans"])
    if case["valid"] or count > expected:
        a.same("execution_plans (count)", count, expected)


def audit_case(a, path, run_dir, doc, case, index, seen):
    """One case: its structure, id, figures, plans and source; whether it is valid."""
    a.where = f"{path} case #{index}"
    member(a, case, "", "id", "str")
    a.where = f"{path} case {printable(case['id'])}"
    if "round" in case:
        a.where += f" round {printable(case['round'])}"
    run = doc["run"]
    rounds = run["replay"]["rounds"] if "replay" in run else None
    check_case(a, case, doc["schema_version"], rounds)
    audit_identity(a, case, seen)
    valid = audit_validity(a, case, doc)
    if case["op"] == "gemm":
        audit_gemm_precision(a, case)
    audit_plan_count(a, case)
    plans = [audit_plan(a, p, case, run_capability(doc)) for p in case["execution_plans"]]
    if case["execution_plans"]:
        audit_source(a, run_dir, case, plans[0])
    for record in case["execution_plans"]:
        if record["kind"] == "row_reduction":  # planned under the run's profile (analytic before)
            a.same("plan.profile (the run's planner_profile)", record["profile"],
                   run.get("planner_profile", "analytic"))
    return valid


def completion(a, doc):
    """None for a complete run, else why it is INCOMPLETE. A run that stopped early says why
    (run.error); one stopped by SIGINT or SIGTERM also names the signal and the cases it
    never measured (run.interrupted)."""
    run = doc["run"]
    interrupted = run.get("interrupted")
    if run["complete"]:
        if run["error"] is not None:
            a.malformed("run.error", "a complete run carries an error")
        if interrupted is not None:
            a.malformed("run.interrupted", "a complete run was not interrupted")
        if "replay" in run and "replay" not in doc:
            a.fail("replay", "a complete replay without its summary")
        return None
    if not run["error"]:
        a.malformed("run.error", "a run marked incomplete (run.complete false) must say why")
    if interrupted is None:
        return f"stopped early: {printable(run['error'])}"
    missing = interrupted["missing_cases"]
    if "replay" in run:
        audit_started_rounds(a, doc)
    else:  # (a replay lists a case once for each round it did not reach)
        present = {case["id"] for case in doc["cases"]}
        measured = [case_id for case_id in missing if case_id in present]
        if measured:
            a.fail("run.interrupted.missing_cases", f"{printable(measured[0])} was measured")
    return f"interrupted by {interrupted['signal']}, {len(missing)} case(s) missing"


def audit_started_rounds(a, doc):
    """An interrupted replay has no summary (some rounds would mislead); the order of each
    round that started is still recorded, and no case comes from a round that did not start."""
    info = doc["run"]["replay"]
    started = len(info["variant_order"])
    if started > info["rounds"]:
        a.fail("run.replay.variant_order (count)", f"{started} orders for {info['rounds']} rounds")
    audit_variant_order(a, info)
    for case in doc["cases"]:
        if case["round"] >= started:
            a.fail("cases", f"{printable(case['id'])} measured in round {case['round']}, "
                   f"which never started ({started} did)")


def audit_artifacts(a, path, doc):
    """--check-current-artifacts: the files at the recorded paths are still the ones recorded."""
    for art in doc["provenance"]["artifacts"]:
        a.where = f"{path} artifact {printable(art['path'])}"
        try:
            current = file_sha256(art["path"], ARTIFACT_CAP)
        except Unreadable as e:
            a.fail("sha256 (current file)", f"cannot hash the current file: {e}")
        a.same("sha256 (current file)", art["sha256"], current)
    # the user-python provider's modules are not loaded libraries: the cases name them
    modules = {}
    for case in doc["cases"]:
        details = case.get("provider_details") or {}
        if case["provider"] == "user-python" and "module_path" in details:
            modules.setdefault(details["module_path"], details["sha256"])
    for module, recorded in sorted(modules.items()):
        a.where = f"{path} user-python module {printable(module)}"
        try:
            current = file_sha256(module, ARTIFACT_CAP)
        except Unreadable as e:
            a.fail("sha256 (current file)", f"cannot hash the current file: {e}")
        a.same("sha256 (current file)", recorded, current)


def load_run(a, path):
    """The raw bytes and the document of a results file, checked to be one."""
    a.where = path
    try:
        raw = read_results(path)
        doc = parse_results(raw)
    except Unreadable as e:
        raise Malformed(str(e)) from None
    except Malformed as e:
        raise Malformed(f"{path}: {e}") from None
    check_document(a, doc)
    return raw, doc


def audit_run(a, run_dir, check_current):
    """Audits one run: (its document, the digest of its results file, None or why it is
    INCOMPLETE, None or a note on the shard or merge it is)."""
    path = results_path(run_dir)
    raw, doc = load_run(a, path)
    valid, seen = 0, set()
    for index, case in enumerate(doc["cases"]):
        valid += audit_case(a, path, run_dir, doc, case, index, seen)
    if "replay" in doc:  # its structure first: the clearest message for a missing round
        audit_replay(a, doc, path)
    a.where = path
    a.same("run.valid_cases", doc["run"]["valid_cases"], valid)
    incomplete = completion(a, doc)
    note = None
    if "merge" in doc["run"]:
        if incomplete is not None:
            a.fail("run.complete", "a merged run joins complete shards only")
        note = audit_merge(a, path, run_dir, doc)
    elif "shard" in doc["run"]:
        note = audit_shard(a, path, doc)
    if check_current:
        audit_artifacts(a, path, doc)
    return doc, hashlib.sha256(raw).hexdigest(), incomplete, note


def audit_runs(a, dirs, check_current):
    """Every run, then their environments against the first's; (receipt inputs, labels)."""
    inputs, environments, labels = [], [], []
    for d in dirs:
        doc, digest, incomplete, note = audit_run(a, d, check_current)
        entry = {"dir": d, "results_sha256": digest, "cases": len(doc["cases"]),
                 "replay": "replay" in doc, "complete": incomplete is None}
        if "shard" in doc["run"]:
            entry["shard"] = f"{doc['run']['shard']['index']}/{doc['run']['shard']['count']}"
        if "merge" in doc["run"]:
            entry["merged_shards"] = doc["run"]["merge"]["shard_count"]
        inputs.append(entry)
        if note is not None:
            print(note)
        if incomplete is not None:
            labels.append(f"tilebench audit: INCOMPLETE run {d}: {incomplete}")
        environments.append(environment(doc))
    a.where = "environments"
    for i, env in enumerate(environments[1:], start=1):
        a.checks += 1
        if env != environments[0]:
            a.fail(f"{dirs[i]} vs {dirs[0]}", f"{short(env, 400)} differs from {short(environments[0], 400)}")
    return inputs, labels


def describe(e):
    """An exception no check foresaw, for a MALFORMED line."""
    if isinstance(e, KeyError):
        return f"a field is missing: {short(e.args[0] if e.args else None, 80)} (KeyError)"
    if isinstance(e, RecursionError):
        return "nested too deeply (RecursionError)"
    text = str(e)
    return f"{type(e).__name__}: {text[:160] + '...' if len(text) > 160 else text}"


def usage_problem(args):
    """Why the arguments cannot be audited (exit 2), or None."""
    if args.receipt and os.path.lexists(args.receipt):
        return f"receipt {args.receipt} exists; receipts are never overwritten"
    for d in args.dirs:
        if not os.path.isdir(d):
            return f"{d} is not a directory"
        if not os.path.lexists(results_path(d)):
            return f"{d}/results.json not found"
    return None


def write_receipt(path, a, inputs, labels):
    verdict = "all figures re-derived"
    if labels:
        verdict += f"; {len(labels)} run(s) INCOMPLETE: the figures of the cases they hold"
    receipt = {"audit_version": AUDIT_VERSION, "checks": a.checks, "inputs": inputs,
               "verdict": verdict}
    try:
        with open(path, "x") as f:  # exclusive create
            json.dump(receipt, f, indent=1, sort_keys=True)
    except FileExistsError:
        return f"receipt {path} exists"
    except OSError as e:
        return f"cannot write the receipt {path}: {e.strerror}"
    return None


def main(argv):
    for stream in (sys.stdout, sys.stderr):  # a record's text never stops a message
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = argparse.ArgumentParser(
        prog="tilebench audit", description=__doc__.split("\n\n")[0],
        epilog=__doc__[__doc__.index("exit status:"):],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+", metavar="DIR",
                        help="a run directory (results.json or results.json.gz)")
    parser.add_argument("--receipt", help="write a receipt of the audit to this new file")
    parser.add_argument("--check-current-artifacts", action="store_true",
                        help="also check that the recorded executable and libraries are unchanged")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_PASSED
    problem = usage_problem(args)
    if problem:
        print(f"tilebench audit: {problem}", file=sys.stderr)
        return EXIT_USAGE
    a = Audit()
    try:
        inputs, labels = audit_runs(a, args.dirs, args.check_current_artifacts)
    except Discrepancy as d:
        print(f"tilebench audit: DISCREPANCY {d}", file=sys.stderr)
        return EXIT_DISCREPANCY
    except Malformed as m:
        print(f"tilebench audit: MALFORMED {m}", file=sys.stderr)
        return EXIT_MALFORMED
    except Exception as e:  # the backstop: input no check foresaw is reported, never a traceback
        print(f"tilebench audit: MALFORMED {a.where}: {describe(e)}", file=sys.stderr)
        return EXIT_MALFORMED
    for label in labels:
        print(label)
    summary = f"tilebench audit: {a.checks} checks passed over {len(inputs)} run(s)"
    if labels:
        summary += f", {len(labels)} of them INCOMPLETE (only the cases they hold were audited)"
    print(summary)
    if args.receipt:
        problem = write_receipt(args.receipt, a, inputs, labels)
        if problem:
            print(f"tilebench audit: {problem}", file=sys.stderr)
            return EXIT_USAGE
    return EXIT_PASSED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
