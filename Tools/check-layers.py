#!/usr/bin/env python3
"""Checks the layering Package.swift claims: the targets that must not link
a SQL driver (GRDB, and with it SQLite) do not, directly or through another
target. Run from the package root (CI runs it before building):

    python3 Tools/check-layers.py

Exits 1 naming each target that links what it must not, and the path
through which it does.
"""
import json
import subprocess
import sys

# Targets that stay free of any SQL driver (SQLite through GRDB, PostgreSQL
# through postgres-nio): the model, the predicate language and compiler,
# the store core, contexts, the sample, the wire protocol, identities, the
# client library and the client-side tools.
DRIVER_FREE = [
    "StrataModel", "StrataQuery", "StrataStore", "StrataContext", "StrataWire",
    "StrataAuth", "StrataClient", "StrataText", "StrataSamples", "strata", "strata-bench",
]
FORBIDDEN_TARGETS = {"StrataSQLite", "CStrataSQLite", "StrataPostgres"}
FORBIDDEN_PRODUCTS = {"GRDB", "GRDBSQLite", "PostgresNIO"}

description = json.loads(subprocess.run(
    ["swift", "package", "describe", "--type", "json"],
    check=True, capture_output=True, text=True).stdout)
targets = {target["name"]: target for target in description["targets"]}

failures = []
for root in DRIVER_FREE:
    if root not in targets:
        failures.append(f"{root}: no such target in Package.swift")
        continue
    # Depth-first over target dependencies, remembering how each was reached.
    stack = [(root, [root])]
    seen = set()
    while stack:
        name, path = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        target = targets[name]
        if name in FORBIDDEN_TARGETS:
            failures.append(f"{root} links {name}: {' -> '.join(path)}")
            continue
        for product in target.get("product_dependencies", []):
            if product in FORBIDDEN_PRODUCTS:
                failures.append(f"{root} links {product}: {' -> '.join(path + [product])}")
        for dependency in target.get("target_dependencies", []):
            if dependency in targets:
                stack.append((dependency, path + [dependency]))

if failures:
    print("layering broken:", *failures, sep="\n  ")
    sys.exit(1)
print(f"layers: {len(DRIVER_FREE)} targets link no SQL driver")
