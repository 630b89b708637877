#!/usr/bin/env python3
"""Runs the workspace's test binaries side by side, as `cargo test` would one by one.

    cargo test --workspace --all-targets --no-run --message-format=json > build.json
    scripts/run-test-binaries.py --jobs 3 --logs DIR build.json

Most of the suite waits on servers (Azurite, tables-server) rather than on the CPU,
so a few binaries at once finish well before the same binaries in a row. Each binary
runs with what `cargo test` gives it (its package's directory as the working
directory, the CARGO_* variables, the toolchain's libraries on the loader's path), its output kept in DIR/<name>.log: printed whole
when it fails, its summary lines (and any line saying what it skipped) when it
passes. The longest binaries (named with --first) start first, so the run does not
end waiting on one that started last.

Ends with a table of every binary's time, and exits 1 if any binary failed or
ran past --timeout seconds (it is then killed and named).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time


def test_binaries(build_json):
    """(name, package, kind, executable, package directory) of each test binary."""
    found = []
    seen = set()
    with open(build_json, encoding="utf-8") as messages:
        for line in messages:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("reason") != "compiler-artifact":
                continue
            executable = message.get("executable")
            if not executable or not message.get("profile", {}).get("test"):
                continue
            if executable in seen:
                continue
            seen.add(executable)
            target = message["target"]
            package_dir = os.path.dirname(message["manifest_path"])
            package = os.path.basename(package_dir)
            found.append(
                {
                    "name": f"{package}::{target['name']}",
                    "target": target["name"],
                    "kind": target["kind"][0],
                    "exe": executable,
                    "dir": package_dir,
                    "package_id": message.get("package_id", ""),
                }
            )
    return found


def package_name(binary):
    """The package's name, from cargo's package id (`path+file:///..#name@0.1.0`)."""
    spec = binary["package_id"].rsplit("#", 1)[-1]
    return spec.split("@", 1)[0] if "@" in spec else os.path.basename(binary["dir"])


# The shards of a split binary: name, the test harness's arguments, and how many of
# its tests run at once (None: cargo's default, one per core).
SHARDS = [
    ("azurite", ["azurite::"], None),
    ("server", ["server::"], None),
    ("server_cosmos", ["server_cosmos::"], None),
    ("rest", ["--skip", "azurite::", "--skip", "server::", "--skip", "server_cosmos::"], None),
]


def sysroot_libs():
    """The toolchain's library directories: a proc-macro crate's test binary links
    libstd dynamically, and cargo puts them on the loader's path."""
    try:
        root = subprocess.run(
            ["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True
        ).stdout.strip()
        host = subprocess.run(
            ["rustc", "--print", "host-tuple"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if not host:
            verbose = subprocess.run(
                ["rustc", "-vV"], capture_output=True, text=True, check=True
            ).stdout
            host = next(
                (l.split(":", 1)[1].strip() for l in verbose.splitlines() if l.startswith("host:")),
                "",
            )
    except (OSError, subprocess.CalledProcessError):
        return []
    libs = [os.path.join(root, "lib")]
    if host:
        libs.insert(0, os.path.join(root, "lib", "rustlib", host, "lib"))
    return libs


SYSROOT_LIBS = sysroot_libs()


def environment(binary):
    env = dict(os.environ)
    loader = "DYLD_FALLBACK_LIBRARY_PATH" if sys.platform == "darwin" else "LD_LIBRARY_PATH"
    paths = [os.path.dirname(binary["exe"])] + SYSROOT_LIBS
    if env.get(loader):
        paths.append(env[loader])
    env[loader] = os.pathsep.join(paths)
    if binary.get("threads") and "RUST_TEST_THREADS" not in os.environ:
        env["RUST_TEST_THREADS"] = str(binary["threads"])
    env["CARGO_MANIFEST_DIR"] = binary["dir"]
    env["CARGO_PKG_NAME"] = package_name(binary)
    env["CARGO_CRATE_NAME"] = binary["target"].replace("-", "_")
    cargo = shutil.which("cargo")
    if cargo and "CARGO" not in env:
        env["CARGO"] = cargo
    return env


def reap(process, block=False):
    """(exit code or None while it runs, CPU seconds it used)."""
    try:
        pid, status, usage = os.wait4(process.pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        return process.returncode, 0.0
    if pid == 0:
        return None, 0.0
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_utime + usage.ru_stime


def worth_showing(line):
    lowered = line.lower()
    return (
        line.startswith("test result:")
        or "skipp" in lowered
        or line.startswith("running ")
        and " tests" in line
        and not line.startswith("running 0 tests")
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_json", help="cargo's --message-format=json output")
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--logs", required=True, help="directory for each binary's log")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per binary")
    parser.add_argument(
        "--split",
        default="",
        help="comma-separated target names to run as shards side by side: the "
        "azurite:: tests, the server:: tests, and the rest",
    )
    parser.add_argument(
        "--alone",
        default="",
        help="comma-separated target names to run last, one at a time, with nothing "
        "beside them (tests that time the servers' answers)",
    )
    parser.add_argument(
        "--first",
        default="",
        help="comma-separated target names to start first, in this order",
    )
    args = parser.parse_args()

    binaries = test_binaries(args.build_json)
    if not binaries:
        print("run-test-binaries: no test binaries in", args.build_json, file=sys.stderr)
        return 1
    first = [name for name in args.first.split(",") if name]
    rank = {name: i for i, name in enumerate(first)}
    binaries.sort(key=lambda b: rank.get(b["target"], len(rank)))
    split = {name for name in args.split.split(",") if name}
    sharded = []
    for binary in binaries:
        if binary["target"] not in split:
            binary["args"] = []
            binary["threads"] = None
            sharded.append(binary)
            continue
        # A typed matrix binary: its Azurite and server tests wait on one process
        # each; as shards of their own they run beside the rest.
        for shard, filters, threads in SHARDS:
            sharded.append(
                dict(binary, name=f"{binary['name']}[{shard}]", args=filters, threads=threads)
            )
    binaries = sharded
    alone_names = {name for name in args.alone.split(",") if name}
    alone = [b for b in binaries if b["target"] in alone_names]
    binaries = [b for b in binaries if b["target"] not in alone_names]
    os.makedirs(args.logs, exist_ok=True)

    waiting = list(binaries)
    running = []
    results = []
    started_all = time.monotonic()
    while waiting or running or alone:
        if not waiting and not running and alone:
            # Nothing else runs: the next binary that must run alone starts.
            waiting.append(alone.pop(0))
        while waiting and len(running) < args.jobs:
            binary = waiting.pop(0)
            log_name = binary["name"].replace("::", "--").replace("[", "-").replace("]", "")
            log_path = os.path.join(args.logs, log_name + ".log")
            log = open(log_path, "w", encoding="utf-8")
            process = subprocess.Popen(
                [binary["exe"]] + binary["args"],
                cwd=binary["dir"],
                env=environment(binary),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            running.append((binary, process, log, log_path, time.monotonic()))
        time.sleep(0.2)
        still = []
        for binary, process, log, log_path, started in running:
            took = time.monotonic() - started
            code, cpu = reap(process)
            if code is None and took > args.timeout:
                process.kill()
                code, cpu = reap(process, block=True)
                code = "timeout"
            if code is None:
                still.append((binary, process, log, log_path, started))
                continue
            log.close()
            passed = code == 0
            with open(log_path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            verdict = "PASS" if passed else ("TIMEOUT" if code == "timeout" else "FAIL")
            print(
                f"--- {verdict} {binary['name']} ({binary['kind']}) in {took:.1f}s, "
                f"{cpu:.1f}s of CPU",
                flush=True,
            )
            if passed:
                for line in text.splitlines():
                    if worth_showing(line):
                        print("    " + line)
            else:
                print(text)
                if code == "timeout":
                    print(f"    killed after {args.timeout}s: it hung or is far too slow")
            sys.stdout.flush()
            results.append((binary["name"], took, verdict, cpu))
        running = still

    wall = time.monotonic() - started_all
    total_cpu = sum(r[3] for r in results)
    print(
        f"\n==> {len(results)} test binaries, {args.jobs} at a time, in {wall:.0f}s "
        f"({total_cpu:.0f}s of CPU in the test processes)"
    )
    for name, took, verdict, cpu in sorted(results, key=lambda r: -r[1])[:15]:
        print(f"  {verdict:7} {took:7.1f}s {cpu:7.1f}s CPU  {name}")
    failed = [r[0] for r in results if r[2] != "PASS"]
    if failed:
        print("\nfailed: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
