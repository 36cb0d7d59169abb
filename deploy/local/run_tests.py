#!/usr/bin/env python3
"""Runs the workspace's test executables in parallel lanes (what `deploy/local/test.sh` calls).

`cargo test --workspace` runs its test executables one after another, and most of the
end-to-end ones spend their time waiting on Kafka, Neo4j and epoch seals, leaving the cores
idle. This runs them `--jobs` at a time instead (default 2, `EPIGRAPH_TEST_JOBS`), longest
first, and the doc tests beside them; an executable that takes the shared services away
(`outages`: it stops Neo4j and Kafka) runs alone at the end. Each end-to-end test uses its own
topic prefix, tenant, state and LanceDB folders, so executables do not see each other's data.

Every executable runs as `cargo test` would run it: from its package's folder, with the
`CARGO_*` variables cargo sets, `--test-threads=2`. Its output is printed in one block when it
ends, with its wall time; a line every minute names what is still running. Nothing stops at
the first failure: the summary lists every executable, slowest first, and the exit code is 1
when any failed. An executable that outlives `--timeout` seconds (default 900,
`EPIGRAPH_TEST_TIMEOUT`) is stopped with its whole process group (the servers it started too)
and counts as failed, so that one hung test cannot eat CI's 90 minutes.

Usage: run_tests.py [--jobs N] [--timeout S] [--list] [-- ARGS PASSED TO EVERY EXECUTABLE]
(stdlib only; needs `cargo` and the workspace built: it lists the executables with
`cargo test --no-run --message-format=json`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

RESULT = re.compile(
    r"test result: \w+\. (?P<passed>\d+) passed; (?P<failed>\d+) failed; (?P<ignored>\d+) ignored"
)
# Executables that stop or restart the shared services: alone, after everything else.
ALONE = {"outages"}
# Wall times (seconds) measured on 2026-12-05 with two lanes (2-core Xeon, debug build; the
# injection test with its whole walk again, 246 s alone): the
# longest start first, so that the lanes end together. Unknown executables count as 30 s.
KNOWN_SECONDS = {
    "injection": 330,
    "workspace_browser": 240,
    "doc-tests": 200,
    "epigraph_sinks": 129,
    "slack_export": 92,
    "llm": 90,
    "documents_end_to_end": 88,
    "reviews": 83,
    "vectors": 80,
    "epigraph_sources": 77,
    "views": 73,
    "schema_registry": 65,
    "epistemics_end_to_end": 57,
    "proposals": 53,
    "kafka_connect": 51,
    "extraction_end_to_end": 51,
    "imap": 50,
    "query_service": 50,
    "metrics": 38,
    "dlq": 33,
    "caldav": 31,
    "rebuild": 30,
}


@dataclass
class Job:
    name: str
    argv: list[str]
    cwd: str
    env: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    code: int | None = None
    log: Path | None = None
    timed_out: bool = False


def executables(repo: Path) -> list[Job]:
    """Every test executable of the workspace, as `cargo test --no-run` reports them."""
    out = subprocess.run(
        ["cargo", "test", "--workspace", "--locked", "--no-run", "--message-format=json"],
        cwd=repo,
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    jobs = []
    for line in out.splitlines():
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if message.get("reason") != "compiler-artifact" or not message.get("executable"):
            continue
        if not message.get("profile", {}).get("test"):
            continue
        target = message["target"]
        package_dir = str(Path(message["manifest_path"]).parent)
        package = message["package_id"]
        # `path+file:///…/tests#epigraph-tests@0.1.0` → epigraph-tests, 0.1.0
        name_version = package.rsplit("#", 1)[-1]
        package_name, _, version = name_version.partition("@")
        if not version:  # older form: `name version (source)`
            package_name, version = package.split(" ")[:2]
        kinds = target["kind"]
        name = target["name"]
        if "lib" in kinds or "rlib" in kinds or "proc-macro" in kinds:
            name = f"{name} (lib)"
        elif "bin" in kinds:
            name = f"{name} (bin)"
        env = {
            "CARGO_MANIFEST_DIR": package_dir,
            "CARGO_PKG_NAME": package_name,
            "CARGO_PKG_VERSION": version,
            "CARGO_CRATE_NAME": target["name"].replace("-", "_"),
        }
        jobs.append(Job(name=name, argv=[message["executable"]], cwd=package_dir, env=env))
    return jobs


def key_of(job: Job) -> str:
    return job.name.split(" ")[0]


def run_job(job: Job, extra: list[str], logs: Path, timeout: float) -> None:
    """Runs `job` in a process group of its own; past `timeout` seconds the group is killed."""
    job.log = logs / (job.name.replace(" ", "_").replace("/", "_") + ".log")
    env = dict(os.environ)
    env.update(job.env)
    started = time.monotonic()
    with open(job.log, "w") as log:
        process = subprocess.Popen(
            job.argv + extra, cwd=job.cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            job.code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            job.timed_out = True
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    process.wait(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    continue
            job.code = process.wait()
            log.write(f"\n[tests] {job.name}: stopped after {timeout:.0f} s (--timeout)\n")
    job.seconds = time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("EPIGRAPH_TEST_JOBS", "2")))
    parser.add_argument(
        "--timeout", type=float, default=float(os.environ.get("EPIGRAPH_TEST_TIMEOUT", "900")),
        help="seconds an executable may run before its process group is killed (default 900)",
    )
    parser.add_argument("--list", action="store_true", help="print the executables and exit")
    parser.add_argument("extra", nargs="*", help="arguments for every executable (after --)")
    args = parser.parse_args()
    repo = Path(__file__).resolve().parents[2]
    extra = args.extra or ["--test-threads=2"]

    jobs = executables(repo)
    # rustdoc's merged doctests (edition 2024) refuse `--test-threads` as a test argument
    # ("given more than once"): the doc tests get it as RUST_TEST_THREADS.
    threads = [a.split("=", 1)[1] for a in extra if a.startswith("--test-threads=")]
    doc_args = ["cargo", "test", "--workspace", "--locked", "--doc", "--"]
    doc_args += [a for a in extra if not a.startswith("--test-threads=")]
    doc_env = {"RUST_TEST_THREADS": threads[-1]} if threads else {}
    jobs.append(Job(name="doc-tests", argv=doc_args, cwd=str(repo), env=doc_env))
    if args.list:
        for job in jobs:
            print(job.name, job.argv[0])
        return 0

    alone = [j for j in jobs if key_of(j) in ALONE]
    pooled = [j for j in jobs if key_of(j) not in ALONE]
    pooled.sort(key=lambda j: -KNOWN_SECONDS.get(key_of(j), 30))
    logs = Path(tempfile.mkdtemp(prefix="epigraph-tests."))
    print(f"[tests] {len(jobs)} executables, {args.jobs} at a time; logs in {logs}", flush=True)

    lock = threading.Lock()
    running: dict[str, float] = {}
    queue = list(pooled)
    started = time.monotonic()

    def report(job: Job) -> None:
        if job.timed_out:
            status = f"FAILED (stopped after {args.timeout:.0f} s)"
        else:
            status = "ok" if job.code == 0 else f"FAILED (exit {job.code})"
        with lock:
            print(f"\n===== {job.name}: {status} in {job.seconds:.0f} s =====", flush=True)
            sys.stdout.write(job.log.read_text(errors="replace"))
            sys.stdout.flush()

    def lane() -> None:
        while True:
            with lock:
                if not queue:
                    return
                job = queue.pop(0)
                running[job.name] = time.monotonic()
            run_job(job, extra, logs, args.timeout)
            with lock:
                running.pop(job.name, None)
            report(job)

    done = threading.Event()

    def heartbeat() -> None:
        while not done.wait(60):
            with lock:
                now = time.monotonic()
                names = ", ".join(f"{n} ({now - t:.0f} s)" for n, t in running.items())
                print(f"[tests] {now - started:.0f} s: running {names or 'nothing'}", flush=True)

    threading.Thread(target=heartbeat, daemon=True).start()
    lanes = [threading.Thread(target=lane) for _ in range(max(1, args.jobs))]
    for thread in lanes:
        thread.start()
    for thread in lanes:
        thread.join()
    for job in alone:
        with lock:
            running[job.name] = time.monotonic()
        run_job(job, extra, logs, args.timeout)
        with lock:
            running.pop(job.name, None)
        report(job)
    done.set()

    total = time.monotonic() - started
    failed = [j for j in jobs if j.code != 0 or j.timed_out]
    counts = {"passed": 0, "failed": 0, "ignored": 0}
    for job in jobs:
        for line in job.log.read_text(errors="replace").splitlines():
            match = RESULT.search(line)
            if match:
                for word in counts:
                    counts[word] += int(match.group(word))
    print(
        f"\n[tests] {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['ignored']} ignored"
    )
    print(f"[tests] {len(jobs)} executables in {total / 60:.1f} min wall; slowest first:")
    for job in sorted(jobs, key=lambda j: -j.seconds):
        mark = "ok" if job.code == 0 and not job.timed_out else "FAILED"
        if job.timed_out:
            mark = "TIMEOUT"
        print(f"  {job.seconds:7.1f} s  {mark:6}  {job.name}")
    if failed:
        print(f"[tests] FAILED: {', '.join(j.name for j in failed)}", flush=True)
        return 1
    print("[tests] every executable passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
