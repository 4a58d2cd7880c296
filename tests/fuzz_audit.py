#!/usr/bin/env python3
"""Bounded random-mutation fuzzing of the audit (issue 15).

Takes the seed corpus (run directories with a results.json[.gz]; tests/corpus/audit by
default), makes mutants of it (keys deleted or renamed, values of another type, lists
truncated or extended, values swapped, deep nesting, huge numbers, NaN text, truncated or
garbled bytes, gzip, and files that are FIFOs, directories or devices), and audits each
with the audit's main() in this process. A mutant fails the fuzz when the audit lets an
exception out, prints a traceback, exits other than 0, 1 or 3, or takes longer than the
per-mutant limit. Each failing mutant is kept in a folder it names.

usage: fuzz_audit.py [--seconds S] [--count N] [--seed X] [--limit T] [--only I] [DIR...]
  S, N: stop after S seconds or N mutants, whichever first (TB_FUZZ_SECONDS,
  TB_FUZZ_COUNT; default 60 and 3000); X: the seed (TB_FUZZ_SEED; default random,
  printed); mutant I of seed X is made from Random(f"{X}:{I}"), so --seed X --only I
  makes it again. TB_AUDIT names the audit (default tools/audit/tilebench_audit.py).
exit: 0 no mutant failed; 1 some did; 2 bad usage or a corpus entry that does not pass.
"""
import argparse
import contextlib
import copy
import gzip
import hashlib
import importlib.util
import io
import json
import os
import random
import shutil
import signal
import stat
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CORPUS = os.path.join(ROOT, "tests", "corpus", "audit")
ALLOWED_EXITS = (0, 1, 3)


class MutantTimeout(BaseException):
    """Raised by the alarm; a BaseException, so the audit's backstop cannot swallow it."""


def load_audit():
    path = os.environ.get("TB_AUDIT", os.path.join(ROOT, "tools", "audit", "tilebench_audit.py"))
    spec = importlib.util.spec_from_file_location("tilebench_audit", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def corpus_runs(dirs):
    """Every run directory named or directly below a named directory."""
    runs = []
    for d in dirs:
        if not os.path.isdir(d):
            continue
        candidates = [d] + sorted(os.path.join(d, e) for e in os.listdir(d))
        for c in candidates:
            if any(os.path.isfile(os.path.join(c, n)) for n in ("results.json", "results.json.gz")):
                runs.append(c)
    return runs


def read_doc(run_dir):
    path = os.path.join(run_dir, "results.json")
    opener = open if os.path.exists(path) else gzip.open
    with opener(path if os.path.exists(path) else path + ".gz", "rb") as f:
        return json.loads(f.read())


# ---- mutations of the document ---------------------------------------------------------

class Text:
    """Raw JSON text to put where a value was (deep nesting, NaN, numbers json cannot print)."""
    counter = 0

    def __init__(self, text):
        Text.counter += 1
        self.marker = f"\u0000fuzz-{Text.counter}\u0000"
        self.text = text


def walk(rng, doc):
    """A random path from the root: at each container stop or go on into a random child
    (so that the top of the document is hit as often as the deep plan records)."""
    path, node = [], doc
    while isinstance(node, (dict, list)) and node:
        if path and rng.random() < 0.3:
            break
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append(key)
        node = node[key]
    return path


def get(doc, path):
    for key in path:
        doc = doc[key]
    return doc


def put(doc, path, value):
    get(doc, path[:-1])[path[-1]] = value


def strange_value(rng, old):
    return rng.choice([
        None, True, False, 0, -1, 1, 2 ** 31, 2 ** 63, 2 ** 64, -(2 ** 63), 0.5, -0.0, 1e308,
        "", "x", "../../etc/passwd", "/dev/zero", "ab" * 32, "\ud800", "é", [], {}, [old],
        {"k": old}, str(old)[:40], [old, old], "a" * rng.choice([10, 10 ** 5])])


def numeric_value(rng, old):
    if isinstance(old, bool) or not isinstance(old, (int, float)):
        return Text(rng.choice(["1e400", "-1e400", "9" * 5000, "NaN", "Infinity", "-Infinity"]))
    return rng.choice([old + 1, old - 1, -old, 0, old * (1 + 1e-6), old * 2, old / 3, 10 ** 20,
                       Text("1e400"), Text("NaN"), Text("9" * 5000), float(old), int(old)])


def op_delete(rng, doc):
    path = walk(rng, doc)
    if path:
        parent = get(doc, path[:-1])
        del parent[path[-1]]
        return f"delete {path}"
    return "delete nothing"


def op_retype(rng, doc):
    path = walk(rng, doc)
    if not path:
        return "retype nothing"
    put(doc, path, strange_value(rng, get(doc, path)))
    return f"retype {path}"


def op_number(rng, doc):
    path = walk(rng, doc)
    if not path:
        return "number nothing"
    put(doc, path, numeric_value(rng, get(doc, path)))
    return f"number {path}"


def op_truncate_list(rng, doc):
    for _ in range(20):
        path = walk(rng, doc)
        node = get(doc, path)
        if isinstance(node, list) and node:
            del node[rng.randrange(len(node)):]
            return f"truncate {path}"
    return "truncate nothing"


def op_extend_list(rng, doc):
    for _ in range(20):
        path = walk(rng, doc)
        node = get(doc, path)
        if isinstance(node, list):
            node.append(copy.deepcopy(rng.choice(node)) if node and rng.random() < 0.7
                        else strange_value(rng, None))
            return f"extend {path}"
    return "extend nothing"


def op_swap(rng, doc):
    a, b = walk(rng, doc), walk(rng, doc)
    if not a or not b or a[:len(b)] == b or b[:len(a)] == a:
        return "swap nothing"
    va, vb = get(doc, a), get(doc, b)
    put(doc, a, vb)
    put(doc, b, va)
    return f"swap {a} {b}"


def op_swap_siblings(rng, doc):
    """Two entries of one list or object exchanged: ids of two cases, two samples."""
    path = walk(rng, doc)[:-1]
    node = get(doc, path)
    keys = list(node) if isinstance(node, dict) else list(range(len(node)))
    if len(keys) < 2:
        return "swap siblings nothing"
    k1, k2 = rng.sample(keys, 2)
    node[k1], node[k2] = node[k2], node[k1]
    return f"swap siblings {path} {k1} {k2}"


def op_rename_key(rng, doc):
    path = walk(rng, doc)
    if path and isinstance(get(doc, path[:-1]), dict):
        parent = get(doc, path[:-1])
        parent[path[-1] + rng.choice(["_", "X", " "])] = parent.pop(path[-1])
        return f"rename {path}"
    return "rename nothing"


def op_nest(rng, doc):
    path = walk(rng, doc)
    depth = rng.choice([1, 3, 40, 400, 990, 5000, 200000])
    node = get(doc, path) if path else 0
    inner = node.text if isinstance(node, Text) else json.dumps(node, default=lambda t: 0)[:1000]
    inner = inner if inner.count("[") + inner.count("{") == 0 else "0"  # cut text stays JSON
    opener, closer = rng.choice([("[", "]"), ('{"a": ', "}")])
    text = opener * depth + inner + closer * depth
    if path:
        put(doc, path, Text(text))
    else:
        doc["cases"] = Text(text)
    return f"nest {path} x{depth}"


def op_string(rng, doc):
    for _ in range(20):
        path = walk(rng, doc)
        node = get(doc, path) if path else None
        if isinstance(node, str):
            choice = rng.randrange(4)
            new = (node[:-1] if choice == 0 else node + "/x" if choice == 1
                   else node.upper() if choice == 2 else node.replace("x", "y", 1).replace("3", "4", 1))
            put(doc, path, new)
            return f"string {path}"
    return "string nothing"


def op_bool(rng, doc):
    for _ in range(20):
        path = walk(rng, doc)
        if path and isinstance(get(doc, path), bool):
            put(doc, path, not get(doc, path))
            return f"flip {path}"
    return "flip nothing"


DOC_OPS = [op_delete, op_retype, op_number, op_truncate_list, op_extend_list, op_swap,
           op_swap_siblings, op_rename_key, op_nest, op_string, op_bool]


def serialise(doc):
    """JSON text, with every Text placeholder replaced by its raw text."""
    texts = []

    def collect(node):
        if isinstance(node, Text):
            texts.append(node)
            return node.marker
        if isinstance(node, dict):
            return {k: collect(v) for k, v in node.items()}
        if isinstance(node, list):
            return [collect(v) for v in node]
        return node

    try:
        text = json.dumps(collect(doc))
    except (ValueError, RecursionError):  # an int json cannot print, or a cycle-deep value
        text = json.dumps({"schema": "tilebench.results"})
    for t in texts:
        text = text.replace(json.dumps(t.marker), t.text)
    return text.encode("utf-8", "surrogatepass")


# ---- mutations of the bytes and of the files -------------------------------------------

def mutate_bytes(rng, data):
    choice = rng.randrange(4)
    if choice == 0:
        return data[:rng.randrange(len(data) + 1)], "truncate bytes"
    if choice == 1:
        i = rng.randrange(len(data))
        return data[:i] + bytes([rng.randrange(256)]) + data[i + 1:], "garble a byte"
    if choice == 2:
        return b"\xef\xbb\xbf" + data, "byte order mark"
    return data.decode("utf-8", "surrogatepass").encode("utf-16", "surrogatepass"), "utf-16"


def write_results(rng, target, data):
    """results.json, or results.json.gz (sometimes cut short or not gzip at all)."""
    if rng.random() < 0.2:
        packed = gzip.compress(data, compresslevel=1)
        roll = rng.random()
        if roll < 0.15:
            packed, how = packed[:rng.randrange(len(packed))], "truncated gzip"
        elif roll < 0.25:
            packed, how = data, "gzip name, no gzip"
        else:
            how = "gzip"
        with open(os.path.join(target, "results.json.gz"), "wb") as f:
            f.write(packed)
        return how
    with open(os.path.join(target, "results.json"), "wb") as f:
        f.write(data)
    return "json"


def mutate_files(rng, target, doc):
    """A file where the audit must refuse to read: the results or a case's source."""
    results = os.path.join(target, "results.json")
    choice = rng.randrange(6)
    if choice == 0:
        os.mkfifo(results)
        return "results.json is a FIFO"
    if choice == 1:
        os.mkdir(results)
        return "results.json is a directory"
    if choice == 2:
        os.symlink(rng.choice(["/dev/zero", "/dev/urandom", "/nonexistent", results]), results)
        return "results.json is a symbolic link"
    # a case names a source: the store holds a FIFO, a device, a wrong or a valid file
    cases = doc.get("cases") if isinstance(doc, dict) else None
    with open(results, "wb") as f:
        f.write(serialise(doc))
    if not isinstance(cases, list) or not cases or not isinstance(cases[0], dict):
        return "no case to name a source"
    content = b"// fuzz\n" if rng.random() < 0.7 else b"\xff\xfe not text"
    sha = hashlib.sha256(content).hexdigest()
    case = rng.choice(cases)
    if isinstance(case, dict):
        case["source_sha256"] = sha
    with open(results, "wb") as f:
        f.write(serialise(doc))
    sources = os.path.join(target if rng.random() < 0.5 else os.path.dirname(target), "sources")
    os.makedirs(sources, exist_ok=True)
    path = os.path.join(sources, sha + ".cu")
    kind = rng.choice(["fifo", "device", "file", "directory"])
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        os.symlink("/dev/zero", path)
    elif kind == "directory":
        os.mkdir(path)
    else:
        with open(path, "wb") as f:
            f.write(content)
    return f"a source that is a {kind}"


def archived_sources(audit, run_dir, doc):
    """The generated sources a run names, wherever the audit finds them: each mutant gets a
    copy in its own sources/, so that its audit goes on past the source checks."""
    sources = {}
    for case in doc["cases"]:
        sha = case.get("source_sha256")
        path = sha and audit.archived_source(run_dir, sha)
        if path:
            with open(path, "rb") as f:
                sources[sha] = f.read()
    return sources


def make_mutant(rng, entry, target):
    """Writes a mutant of one corpus entry into target; returns what was done."""
    if entry["sources"]:
        os.mkdir(os.path.join(target, "sources"))
        for sha, text in entry["sources"].items():
            with open(os.path.join(target, "sources", sha + ".cu"), "wb") as f:
                f.write(text)
    doc = copy.deepcopy(entry["doc"])
    steps = [op.__name__[3:] + ": " + op(rng, doc)
             for op in (rng.choice(DOC_OPS) for _ in range(rng.choice([1, 1, 2, 3])))]
    roll = rng.random()
    if roll < 0.06:
        steps.append(mutate_files(rng, target, doc))
        return steps
    data = serialise(doc)
    if roll < 0.16:
        data, how = mutate_bytes(rng, data)
        steps.append(how)
    steps.append(write_results(rng, target, data))
    return steps


# ---- running ---------------------------------------------------------------------------

def run_audit(audit, argv, limit):
    """(exit status or None, output, seconds, escaped traceback or None) of main(argv)."""
    out = io.StringIO()

    def alarm(signum, frame):
        raise MutantTimeout()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(max(1, int(2 * limit)))  # a hang is stopped at twice the limit
    start = time.monotonic()
    escaped = None
    code = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = audit.main(argv)
    except MutantTimeout:
        escaped = f"hung: stopped after {2 * limit:g} s"
    except BaseException:  # anything main lets out is a failure of the audit
        escaped = traceback.format_exc()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), time.monotonic() - start, escaped


def judge(code, output, seconds, escaped, limit):
    """Why a mutant's audit failed the fuzz, or None."""
    if escaped and escaped.startswith("hung"):
        return escaped
    if escaped:
        return f"an exception escaped main():\n{escaped}"
    if "Traceback" in output:
        return "a traceback in the output"
    if code not in ALLOWED_EXITS:
        return f"exit status {code!r}"
    if seconds > limit:
        return f"took {seconds:.1f} s (limit {limit} s)"
    return None


def keep(source, target):
    """A copy of a failing mutant's folder: FIFOs and links made again, never opened."""
    for directory, dirs, files in os.walk(source):
        here = os.path.join(target, os.path.relpath(directory, source))
        os.makedirs(here, exist_ok=True)
        for name in dirs + files:
            src, dst = os.path.join(directory, name), os.path.join(here, name)
            mode = os.lstat(src).st_mode
            if stat.S_ISLNK(mode):
                os.symlink(os.readlink(src), dst)
            elif stat.S_ISFIFO(mode):
                os.mkfifo(dst)
            elif stat.S_ISREG(mode):
                shutil.copyfile(src, dst)


def parse_args(argv):
    env = os.environ
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dirs", nargs="*", default=[DEFAULT_CORPUS])
    p.add_argument("--seconds", type=float, default=float(env.get("TB_FUZZ_SECONDS", 60)))
    p.add_argument("--count", type=int, default=int(env.get("TB_FUZZ_COUNT", 3000)))
    p.add_argument("--seed", default=env.get("TB_FUZZ_SEED"))
    p.add_argument("--limit", type=float, default=10.0, help="seconds a mutant's audit may take")
    p.add_argument("--only", type=int, help="make and audit mutant ONLY of the seed alone")
    args = p.parse_args(argv)
    if args.seed is None:
        args.seed = str(random.SystemRandom().randrange(10 ** 9))
    return args


def main(argv):
    args = parse_args(argv)
    audit = load_audit()
    runs = corpus_runs(args.dirs)
    if not runs:
        print("fuzz_audit: no corpus runs found", file=sys.stderr)
        return 2
    failures_dir = os.path.join(tempfile.gettempdir(), f"tb-fuzz-failures-{args.seed}")
    print(f"fuzz_audit: seed {args.seed}; {len(runs)} corpus run(s); at most {args.count} mutants "
          f"or {args.seconds:g} s")
    entries = []
    for run_dir in runs:
        code, output, _, escaped = run_audit(audit, [run_dir], args.limit)
        if code != 0 or escaped:
            print(f"fuzz_audit: corpus run {run_dir} does not pass:\n{escaped or output}", file=sys.stderr)
            return 2
        doc = read_doc(run_dir)
        entries.append({"dir": run_dir, "doc": doc, "sources": archived_sources(audit, run_dir, doc)})
    indices = [args.only] if args.only is not None else range(args.count)
    start, exits, failures, done = time.monotonic(), {}, 0, 0
    work = tempfile.mkdtemp(prefix="tb-fuzz-")  # after the baseline: a refusal leaves nothing
    try:
        for i in indices:
            if args.only is None and time.monotonic() - start > args.seconds:
                break
            rng = random.Random(f"{args.seed}:{i}")
            entry = rng.choice(entries)
            case_dir = os.path.join(work, "m", "run")
            shutil.rmtree(os.path.join(work, "m"), ignore_errors=True)
            os.makedirs(case_dir)
            steps = make_mutant(rng, entry, case_dir)
            argv_audit = [case_dir]
            if rng.random() < 0.1:  # with another run: the environments are compared
                argv_audit = [entry["dir"], case_dir]
            if rng.random() < 0.05:
                argv_audit.append("--check-current-artifacts")
            code, output, seconds, escaped = run_audit(audit, argv_audit, args.limit)
            done += 1
            exits[code] = exits.get(code, 0) + 1
            why = judge(code, output, seconds, escaped, args.limit)
            if args.only is not None or why:
                print(f"mutant {i} of {os.path.basename(entry['dir'])}: {'; '.join(steps)}")
                print(f"  exit {code}, {seconds:.2f} s: {output.strip()[:400]}")
            if why:
                failures += 1
                kept = os.path.join(failures_dir, str(i))
                shutil.rmtree(kept, ignore_errors=True)
                keep(os.path.join(work, "m"), kept)
                print(f"  FAILED: {why}\n  kept in {kept}; again: {sys.argv[0]} --seed {args.seed} --only {i}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    histogram = ", ".join(f"exit {k}: {v}" for k, v in sorted(exits.items(), key=str))
    print(f"fuzz_audit: seed {args.seed}: {done} mutants in {time.monotonic() - start:.0f} s "
          f"({histogram}); {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
