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

A block without a marker fails the check. Files the commands write in the clone are removed
afterwards. Usage: scripts/readme-commands.py [--list] [README]
"""

import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


def untracked():
    """Paths in the clone that git does not track, ignored ones included (target/ as one)."""
    run = subprocess.run(
        ["git", "ls-files", "--others", "--directory", "--no-empty-directory"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return set(run.stdout.split("\n")) - {""}


def python():
    env_dir = os.environ.get("PYENV", os.path.join(ROOT, "target", "pyenv"))
    py = os.path.join(env_dir, "bin", "python")
    return py if os.access(py, os.X_OK) else sys.executable


def run_block(line, lang, text, stop_s):
    env = dict(os.environ)
    env["PATH"] = os.path.join(ROOT, "target", "release") + os.pathsep + env.get("PATH", "")
    if lang == "python":
        argv = [python(), "-c", text]
    else:
        argv = ["bash", "-eo", "pipefail", "-c", text]
    start = time.monotonic()
    child = subprocess.Popen(argv, cwd=ROOT, env=env, start_new_session=True)
    try:
        code = child.wait(timeout=stop_s)
        stopped = False
    except subprocess.TimeoutExpired:
        # Ctrl-C to the whole group, as a terminal sends it.
        os.killpg(child.pid, signal.SIGINT)
        try:
            code = child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            print(f"README line {line}: did not stop within 60 s of SIGINT", file=sys.stderr)
            return False
        stopped = True
    seconds = time.monotonic() - start
    if stopped:
        print(f"== README line {line}: ran {seconds:.0f} s, stopped by SIGINT as marked", flush=True)
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
    found = [b for b in blocks(readme) if b[1] in ("sh", "bash", "python")]
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
    before = untracked()
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
        for path in sorted(untracked() - before):
            if path.startswith("target/"):
                continue  # the build (a fresh clone's first build included)
            full = os.path.join(ROOT, path)
            subprocess.run(["rm", "-rf", "--", full], check=False)
    print(f"README commands: {len(failed)} failed, {time.monotonic() - total:.0f} s in all")
    if failed:
        print("failed blocks at README lines " + ", ".join(map(str, failed)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
