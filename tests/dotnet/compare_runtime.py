#!/usr/bin/env python3
"""compare_runtime.py <cli.json> <descriptor.json>

<cli.json>: output of `asyncdac runtime --json <core>`:
  {"runtime": {"module", "base", "descriptor", "version", "baseline", "pointer_size",
               "contracts": {name: version}, "types": N, "globals": N, "sub_descriptors": [names]}}
<descriptor.json>: tests/dotnet/descriptor.py's summary of the same runtime's libcoreclr.so file.
Checks version, baseline, pointer size, contracts (name -> version string), type and global counts
(after merging sub-descriptors) and sub-descriptor names. Exit 1 with one line per difference.
"""
import json
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        try:
            cli = json.load(f)
        except json.JSONDecodeError as e:
            print(f"compare_runtime: the CLI's output is not JSON: {e}")
            return 1
    with open(argv[2]) as f:
        exp = json.load(f)
    rt = cli.get("runtime")
    if not isinstance(rt, dict):
        print("compare_runtime: the CLI's JSON has no 'runtime' object")
        return 1
    problems = []
    for key in ("version", "baseline", "pointer_size", "types", "globals"):
        if rt.get(key) != exp.get(key):
            problems.append(f"{key}: cli {rt.get(key)!r} != pack {exp.get(key)!r}")
    cc = {k: str(v) for k, v in (rt.get("contracts") or {}).items()}
    ec = exp["contracts"]
    for k in sorted(set(cc) | set(ec)):
        if cc.get(k) != ec.get(k):
            problems.append(f"contract {k}: cli {cc.get(k)!r} != pack {ec.get(k)!r}")
    if sorted(rt.get("sub_descriptors") or []) != sorted(exp.get("sub_descriptors") or []):
        problems.append(f"sub_descriptors: cli {rt.get('sub_descriptors')} != pack {exp.get('sub_descriptors')}")
    if not str(rt.get("module", "")).endswith("libcoreclr.so"):
        problems.append(f"module {rt.get('module')!r} is not a libcoreclr.so")
    for p in problems:
        print("compare_runtime: " + p)
    if not problems:
        print(f"compare_runtime: ok: version {exp['version']}, {len(ec)} contracts, {exp['types']} types, "
              f"{exp['globals']} globals, sub-descriptors {exp['sub_descriptors']}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
