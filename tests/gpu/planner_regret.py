"""Planner regret (issue 21): for every native row reduction of the runs
given, measured under the planner's automatic variant and under fixed
candidates (`--variants automatic,reference,s4p2,...`), the automatic plan's
time over the fastest candidate's, per op, shape and view, from one scope:
the graph control's p50 a call where every case has it, else the held
control's, else the eager control's, else the host's throughput p50 (a CPU
run). The issue's targets: median regret <= 1.05, worst <= 1.15.

--as-profile P reads runs planned under another cost profile as P's: each
automatic plan is re-derived under P by the audit's planner
(tools/audit/tilebench_audit.py), and a case whose plan P would change is
named and refused (exit 1), since its automatic figure is not P's.

    python3 planner_regret.py [--json OUT.json] [--as-profile P] RESULTS_DIR...

Exit 0 when the targets are met, 1 when not, 2 on bad usage or input.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from results_io import load_results  # noqa: E402 (tests/, beside this folder)

MEDIAN_TARGET, WORST_TARGET = 1.05, 1.15
SCOPES = ("graph", "held", "eager", "host")


def p50(summary):
    return (summary or {}).get("per_call_summary_ns", {}).get("p50")


def figure(case, scope):
    """The case's p50 ns a call in `scope`, or None."""
    device = case.get("device") or {}
    throughput = device.get("throughput") or {}
    if scope in ("graph", "held"):
        return p50(((throughput.get("batch_modes") or {}).get(scope) or {}).get("control"))
    if scope == "eager":
        return p50(throughput.get("control"))
    host = (case.get("host") or {}).get("throughput") or {}
    return host.get("per_call_summary_ns", {}).get("p50")


def groups_of(runs):
    """{(op, m, n, view): {variant: case}} of the valid native cases."""
    groups = {}
    for run in runs:
        for case in run["cases"]:
            if case.get("provider") != "native" or not case.get("variant") or not case.get("valid"):
                continue
            key = (case["op"], case["m"], case["n"], case["input_view"]["kind"])
            groups.setdefault(key, {})[case["variant"]] = case
    return groups


def common_scope(groups):
    cases = [c for g in groups.values() for c in g.values()]
    for scope in SCOPES:
        if cases and all(figure(c, scope) is not None for c in cases):
            return scope
    return None


def regrets(groups, scope):
    rows = []
    for (op, m, n, view), by_variant in sorted(groups.items()):
        if "automatic" not in by_variant or len(by_variant) < 2:
            continue
        times = {v: figure(c, scope) for v, c in by_variant.items()}
        best = min((t, v) for v, t in times.items() if v != "automatic")
        rows.append({"case": f"{op}/{m}x{n}/{view}", "automatic_ns": times["automatic"],
                     "best_fixed": best[1], "best_fixed_ns": best[0],
                     "regret": times["automatic"] / best[0], "candidates": len(times) - 1})
    return rows


def plans_changed_under(profile, groups):
    """The automatic cases whose plan `profile` would not make as recorded."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "tools", "audit"))
    import tilebench_audit  # noqa: E402 (the audit's planner, not tilebench's)
    changed = []
    for by_variant in groups.values():
        case = by_variant.get("automatic")
        if case is None:
            continue
        record = dict(case["execution_plans"][0], profile=profile)
        plan = tilebench_audit.expected_plan(record)
        recorded = case["execution_plans"][0]
        if (plan["mapping"], plan["chosen"]) != (recorded["mapping"], recorded["chosen_candidate"]):
            changed.append(case["id"])
    return sorted(changed)


def options(args):
    """({option: value}, the folders) of the command line, or None on bad usage."""
    given = {}
    while args[:1] in (["--json"], ["--as-profile"]):
        if len(args) < 2:
            print(f"{args[0]} needs a value", file=sys.stderr)
            return None
        given[args[0]], args = args[1], args[2:]
    return given, args


def main(argv):
    parsed = options(argv[1:])
    if parsed is None:
        return 2
    given, args = parsed
    out, profile = given.get("--json"), given.get("--as-profile")
    if profile is not None and profile not in ("analytic", "calibrated", "calibrated-2"):
        print(f"--as-profile {profile!r}: give analytic, calibrated or calibrated-2", file=sys.stderr)
        return 2
    if not args:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    try:
        runs = [load_results(d) for d in args]
    except (FileNotFoundError, ValueError) as e:
        print(f"planner_regret: {e}", file=sys.stderr)
        return 2
    groups = groups_of(runs)
    if profile is not None:
        changed = plans_changed_under(profile, groups)
        if changed:
            print(f"planner_regret: {profile} plans these otherwise; measure them under it: "
                  + ", ".join(changed), file=sys.stderr)
            return 1
        print(f"every automatic plan here is {profile}'s (re-derived by the audit's planner)")
    scope = common_scope(groups)
    rows = regrets(groups, scope) if scope else []
    if not rows:
        print("planner_regret: no native row reduction measured under automatic and a fixed "
              "variant in these runs", file=sys.stderr)
        return 2
    for r in rows:
        print(f"{r['case']:32s} automatic {r['automatic_ns'] / 1e3:9.3f} µs, best of "
              f"{r['candidates']} fixed {r['best_fixed']} {r['best_fixed_ns'] / 1e3:9.3f} µs, "
              f"regret {r['regret']:.3f}")
    values = [r["regret"] for r in rows]
    median, worst = statistics.median(values), max(values)
    ok = median <= MEDIAN_TARGET and worst <= WORST_TARGET
    print(f"{'PASS' if ok else 'FAIL'} planner regret over {len(rows)} case(s), {scope} scope: "
          f"median {median:.3f} (target <= {MEDIAN_TARGET}), worst {worst:.3f} "
          f"(target <= {WORST_TARGET})")
    if out:
        with open(out, "w") as f:
            json.dump({"scope": scope, "median": median, "worst": worst, "rows": rows}, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
