#!/usr/bin/env python3
"""Remove stale test and bench executables from the Cargo target directory before a build.

Every change of a workspace crate links each test executable again under a new hash, and the
old one stays in `<target>/debug/deps` (≈ 0.8 GB each): the directory grows without bound until
a link fails for want of space ("ld terminated with signal 7 [Bus error]" in the CI of session
60, with the disk full). Per executable name only the newest file is kept; a kept one that the
build does not want is simply linked again. Libraries (`.so`, `.rlib`, `.rmeta`, `.d`) are never
touched.

    python3 deploy/local/prune_target.py [target dir]   # default: $CARGO_TARGET_DIR
"""

import os
import re
import sys
from collections import defaultdict

EXECUTABLE = re.compile(r"^(?P<name>.+)-(?P<hash>[0-9a-f]{16})$")


def stale(deps: str) -> list[str]:
    """The executables of `deps` older than the newest of the same name."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for entry in os.scandir(deps):
        match = EXECUTABLE.match(entry.name)
        if match and entry.is_file() and os.access(entry.path, os.X_OK):
            by_name[match["name"]].append(entry.path)
    out: list[str] = []
    for paths in by_name.values():
        paths.sort(key=os.path.getmtime, reverse=True)
        out.extend(paths[1:])
    return out


def main() -> int:
    target = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CARGO_TARGET_DIR", "target")
    deps = os.path.join(target, "debug", "deps")
    if not os.path.isdir(deps):
        return 0
    freed = 0
    for path in stale(deps):
        freed += os.path.getsize(path)
        os.remove(path)
    print(f"[prune] {freed / 1e9:.1f} GB of stale executables removed from {deps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
