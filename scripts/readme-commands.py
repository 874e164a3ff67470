#!/usr/bin/env python3
"""Runs the README's command blocks verbatim and fails on any that exits non-zero (issue 40).

Every ```sh and ```python block of README.md carries a marker on the line before it:

  <!-- readme: run -->            run it (sh: bash -eo pipefail, from the clone's root, with
                                  target/release on PATH; python: the package's virtual
                                  environment, target/pyenv, as scripts/python-test.sh makes it)
  <!-- readme: run, stop 30 s --> run it; still running after 30 s, it is stopped with SIGINT
                                  (Ctrl-C) and counts as run: a long command shown to start
                                  and to work, not waited for
  <!-- readme: ci -->             .ci/run runs each of its commands itself (checked here)
  <!-- readme: show (REASON) -->  not run, with the reason (a synopsis with placeholders, a
                                  run at a scale this machine does not have)

A block without a marker fails the check. A line starting `FAIL ` in a block's output (a
failed self-test check) fails it too, stopped or not; a block still running after 15 minutes
fails. The files the blocks name as outputs (--out, --pairs-out, --json, ...) are removed
afterwards; the run refuses to start where one of them already exists. Usage: scripts/readme-commands.py [--list] [README]
"""

import os
import re
import signal
import subprocess
import sys
import threading
import time

SHELLS = ("sh", "bash", "shell", "console", "zsh")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A block that runs longer than this (and is not marked `stop N s`) fails.
RUN_LIMIT_S = 900
MARKER = re.compile(r"^<!-- readme: (run(?:, stop (\d+) s)?|ci|show \((.+)\)) -->$")


def blocks(path):
    """(line of the fence, language, marker match or None, text) for each fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = MARKER.match(lines[k].strip()) if k >= 0 else None
        out.append((start + 1, lang, marker, "\n".join(lines[start + 1 : j])))
        i = j + 1
    return out


# Options whose value is a file or directory a command writes.
OUTPUT_FLAGS = ("--out", "--pairs-out", "--events-out", "--found-out", "--lost-out", "--json",
                "--csv", "--plots")


def outputs(text):
    """What the block's commands write, by the flags that name outputs (relative paths)."""
    words = text.replace("=", " ").split()
    found = []
    for flag, value in zip(words, words[1:]):
        if flag in OUTPUT_FLAGS and value != "-" and not value.startswith(("/", "-")):
            found.append(value.rstrip("/"))
    return found


def python():
    env_dir = os.environ.get("PYENV", os.path.join(ROOT, "target", "pyenv"))
    py = os.path.join(env_dir, "bin", "python")
    if not os.access(py, os.X_OK):
        sys.exit(f"{py}: no virtual environment with the package; run scripts/python-test.sh "
                 "first (it installs ./python there), or set PYENV")
    return py


def run_block(line, lang, text, stop_s):
    env = dict(os.environ)
    env["PATH"] = os.path.join(ROOT, "target", "release") + os.pathsep + env.get("PATH", "")
    if lang in ("python", "py"):
        argv = [python(), "-c", text]
    else:
        argv = ["bash", "-eo", "pipefail", "-c", text]
    start = time.monotonic()
    child = subprocess.Popen(argv, cwd=ROOT, env=env, start_new_session=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             errors="replace")
    failed_checks = []

    def echo():
        for out in child.stdout:
            sys.stdout.write(out)
            if out.startswith("FAIL "):
                failed_checks.append(out.strip())
        sys.stdout.flush()

    reader = threading.Thread(target=echo, daemon=True)
    reader.start()
    try:
        try:
            code = child.wait(timeout=stop_s or RUN_LIMIT_S)
            stopped = False
        except subprocess.TimeoutExpired:
            if stop_s is None:
                print(f"README line {line}: still running after {RUN_LIMIT_S} s", file=sys.stderr)
                return False
            # Ctrl-C to the whole group, as a terminal sends it.
            os.killpg(child.pid, signal.SIGINT)
            try:
                code = child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                print(f"README line {line}: did not stop within 60 s of SIGINT", file=sys.stderr)
                return False
            stopped = True
    finally:
        # Nothing of the block outlives it (an interrupted run, a failure).
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait()
        reader.join(timeout=10)
    seconds = time.monotonic() - start
    if failed_checks:
        print(f"README line {line}: a check failed: {failed_checks[0]}", file=sys.stderr)
        return False
    if stopped:
        print(f"== README line {line}: ran {seconds:.0f} s, stopped by SIGINT as marked",
              flush=True)
        return True
    print(f"== README line {line}: exit {code} after {seconds:.1f} s", flush=True)
    return code == 0


def ci_commands_present(line, text):
    ci = open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read()
    ok = True
    for cmd in text.split("\n"):
        cmd = cmd.split("#")[0].strip()
        if cmd and cmd not in ci:
            print(f"README line {line}: '{cmd}' is marked ci but .ci/run does not run it",
                  file=sys.stderr)
            ok = False
    return ok


def main():
    args = sys.argv[1:]
    listing = "--list" in args
    args = [a for a in args if a != "--list"]
    readme = args[0] if args else os.path.join(ROOT, "README.md")
    found = [b for b in blocks(readme) if b[1] in SHELLS + ("python", "py")]
    bad = [(line, lang) for line, lang, marker, _ in found if marker is None]
    for line, lang in bad:
        print(f"README line {line}: a ```{lang} block without a <!-- readme: ... --> marker",
              file=sys.stderr)
    if bad:
        return 1
    if listing:
        for line, lang, marker, _ in found:
            print(f"line {line:4} {lang:7} {marker.group(1)}")
        return 0
    written = sorted({o for _, _, m, t in found if m.group(1).startswith("run")
                      for o in outputs(t)})
    there = [o for o in written if os.path.lexists(os.path.join(ROOT, o))]
    if there:
        print("would overwrite " + ", ".join(there) + " in the clone: move them away first",
              file=sys.stderr)
        return 2
    failed = []
    total = time.monotonic()
    try:
        for line, lang, marker, text in found:
            kind = marker.group(1)
            if kind.startswith("show"):
                print(f"== README line {line}: shown, not run ({marker.group(3)})", flush=True)
                continue
            if kind == "ci":
                if not ci_commands_present(line, text):
                    failed.append(line)
                continue
            print(f"== README line {line}: running the {lang} block", flush=True)
            stop = int(marker.group(2)) if marker.group(2) else None
            if not run_block(line, lang, text, stop):
                failed.append(line)
    finally:
        # Only what the blocks name as their outputs, none of which existed before.
        for o in written:
            subprocess.run(["rm", "-rf", "--", os.path.join(ROOT, o)], check=False)
    print(f"README commands: {len(failed)} failed, {time.monotonic() - total:.0f} s in all")
    if failed:
        print("failed blocks at README lines " + ", ".join(map(str, failed)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
