#!/usr/bin/env python3
"""Writes the symbol graph of the types CloudAssets re-exports (Sources/CloudAssets/Exports.swift) for `make docs`.

`import CloudAssets` brings `NetworkPolicy`, `MediaType`, `ChangeToken` and the other types of Exports.swift, but
they are declared in the `package` modules below (AssetStore, S3Transfer), and the symbol graph the DocC plugin
extracts for CloudAssets leaves them out, so a link to them would be broken and their pages missing. The plugin
has no option for re-exported modules, so this script runs swift-symbolgraph-extract itself with the flags the
package's own build used for CloudAssets (read from the build manifest, `.build/debug.yaml`) plus
`-experimental-allowed-reexported-modules`, and writes the graphs to OUTPUT_DIR. docc reads one symbol graph
folder, so `--additional-symbol-graph-dir OUTPUT_DIR` replaces the plugin's graphs with these, which hold the same
symbols plus the re-exported ones.

Usage: scripts/reexported-symbols.py OUTPUT_DIR   (after `swift build --target CloudAssets`)
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MODULE = "CloudAssets"
MANIFEST = ".build/debug.yaml"


def reexported():
    """The modules and type names Exports.swift re-exports: `@_exported import struct AssetStore.ChangeToken`."""
    source = open(f"Sources/{MODULE}/Exports.swift", encoding="utf-8").read()
    found = re.findall(r"^@_exported import \w+ (\w+)\.(\w+)$", source, re.MULTILINE)
    if not found:
        sys.exit("reexported-symbols: no `@_exported import KIND MODULE.TYPE` line in Exports.swift")
    return sorted({module for module, _ in found}), {name for _, name in found}


def compile_arguments():
    """The swiftc arguments of the module's compile command in the build manifest."""
    lines = open(MANIFEST, encoding="utf-8").read().splitlines()
    name = f'"C.{MODULE}-'
    for index, line in enumerate(lines):
        if line.strip().startswith(name) and line.rstrip().endswith('debug.module":'):
            for following in lines[index + 1 : index + 12]:
                stripped = following.strip()
                if stripped.startswith("args: "):
                    return json.loads(stripped[len("args: ") :])
    sys.exit(f"reexported-symbols: no compile command for {MODULE} in {MANIFEST}; run `swift build --target {MODULE}`")


def extract_arguments(swiftc):
    """What swift-symbolgraph-extract needs of them: the target, the search paths and the Clang flags."""
    kept = []
    paired = {"-target", "-sdk", "-I", "-F", "-Xcc", "-module-cache-path", "-resource-dir"}
    index = 0
    while index < len(swiftc):
        argument = swiftc[index]
        if argument in paired and index + 1 < len(swiftc):
            kept += [argument, swiftc[index + 1]]
            index += 2
            continue
        if argument.startswith("-I") and len(argument) > 2:
            kept.append(argument)
        index += 1
    return kept


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    output = sys.argv[1]
    modules, names = reexported()
    with tempfile.TemporaryDirectory() as scratch:
        command = (
            ["swift-symbolgraph-extract", "-module-name", MODULE]
            + extract_arguments(compile_arguments())
            + ["-minimum-access-level", "public", "-emit-extension-block-symbols", "-skip-synthesized-members"]
            + ["-experimental-allowed-reexported-modules=" + ",".join(modules), "-output-dir", scratch]
        )
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit("reexported-symbols: swift-symbolgraph-extract failed:\n" + result.stderr)
        files = sorted(name for name in os.listdir(scratch) if name.endswith(".symbols.json"))
        graph = json.load(open(os.path.join(scratch, f"{MODULE}.symbols.json"), encoding="utf-8"))
        found = {s["pathComponents"][0] for s in graph["symbols"] if len(s["pathComponents"]) == 1}
        if names - found:
            sys.exit("reexported-symbols: not in the symbol graph: " + ", ".join(sorted(names - found)))
        os.makedirs(output, exist_ok=True)
        for name in os.listdir(output):
            if name.endswith(".symbols.json"):
                os.remove(os.path.join(output, name))
        for name in files:
            shutil.copy(os.path.join(scratch, name), os.path.join(output, name))
    print(f"reexported-symbols: {len(graph['symbols'])} symbols, {', '.join(sorted(names))} included")


if __name__ == "__main__":
    main()
