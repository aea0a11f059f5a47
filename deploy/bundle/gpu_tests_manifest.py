#!/usr/bin/env python3
"""The gpu tests of a bundle, from `ctest --show-only=json-v1 -L gpu` and gpu-tests.txt.

Prints one line per program: NAME<TAB>gtest<TAB>BINARY<TAB>FILTER (a gtest program's gpu cases,
':'-joined) or NAME<TAB>program<TAB>BINARY<TAB>ARGS (a test program run as ctest runs it; exit code
77 means skipped). Paths under the build's bin/ become @BIN@/NAME.
Usage: gpu_tests_manifest.py CTEST_JSON BUILD_DIR LIST_FILE
"""
import json
import os
import sys


def main():
    ctest_json, build_dir, list_file = sys.argv[1:4]
    bin_dir = os.path.join(os.path.realpath(build_dir), "bin") + "/"
    with open(ctest_json) as f:
        tests = json.load(f).get("tests", [])
    gtest = {}  # binary -> [case names]
    programs = []
    for test in tests:
        command = test.get("command") or []
        if not command or not os.path.realpath(command[0]).startswith(bin_dir):
            continue
        binary = os.path.basename(command[0])
        filters = [a.split("=", 1)[1] for a in command[1:] if a.startswith("--gtest_filter=")]
        if filters:
            gtest.setdefault(binary, []).extend(filters)
        else:
            args = [a.replace(bin_dir, "@BIN@/") for a in command[1:]]
            programs.append((test["name"], binary, args))
    if os.path.exists(list_file):
        with open(list_file) as f:
            for line in f:
                words = line.split("#", 1)[0].split()
                if words and not any(p[1] == words[0] for p in programs) and words[0] not in gtest:
                    programs.append((words[0], words[0], words[1:]))
    for binary, cases in sorted(gtest.items()):
        print(f"{binary}\tgtest\t{binary}\t{':'.join(cases)}")
    for name, binary, args in programs:
        print("\t".join([name, "program", binary] + args))


if __name__ == "__main__":
    main()
