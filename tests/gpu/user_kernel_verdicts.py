"""The verdicts of the user-kernels stage of scripts/gpu.sh, from a run's
results.json: one PASS or FAIL line each, exit 1 when any failed.

    python3 user_kernel_verdicts.py valid RUN_DIR
        every case valid (the CUDA example, the .cu source or a Python callable
        beside native, torch, torch.compile), and every case's
        launches_on_stream defence passed (built-ins included)
    python3 user_kernel_verdicts.py caught RUN_DIR FRAGMENT
        every user case invalid by the defence launches_on_stream, its detail
        containing FRAGMENT; every native case valid (a broken kernel per
        GPU-only class: tests/user_kernels/cuda)
"""
import json
import os
import sys

DEFENCE = "launches_on_stream"


def load(run_dir):
    path = os.path.join(run_dir, "results.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def on_stream(case):
    return (case.get("defences") or {}).get(DEFENCE, {"outcome": "absent", "detail": ""})


USER_PROVIDERS = ("user", "user-python")


def valid(doc):
    yield ("user cases measured", any(c["provider"] in USER_PROVIDERS for c in doc["cases"]),
           "")
    for case in doc["cases"]:
        d = on_stream(case)
        yield (f"{case['id']} valid, {DEFENCE} {d['outcome']}",
               case["valid"] and d["outcome"] == "passed", case["error"] or d["detail"])


def caught(doc, fragment):
    users = [c for c in doc["cases"] if c["provider"] == "user"]
    yield "user cases measured", bool(users), ""
    for case in users:
        d = on_stream(case)
        yield (f"{case['id']} invalid by {DEFENCE} ({fragment!r})",
               not case["valid"] and d["outcome"] == "failed" and fragment in d["detail"]
               and (case["error"] or "").startswith(f"defence {DEFENCE} failed"),
               case["error"] or d["detail"])
    for case in doc["cases"]:
        if case["provider"] == "native":
            yield f"{case['id']} (native beside it) valid", case["valid"], case["error"] or ""


def main(argv):
    if len(argv) < 3 or argv[1] not in ("valid", "caught") or (argv[1] == "caught") != (len(argv) == 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    doc = load(argv[2])
    if doc is None:
        print(f"FAIL {argv[2]}: no results.json (the run did not finish)")
        return 1
    checks = valid(doc) if argv[1] == "valid" else caught(doc, argv[3])
    failed = 0
    for name, ok, why in checks:
        print(f"{'PASS' if ok else 'FAIL'} {name}" + ("" if ok else f": {why}"))
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
