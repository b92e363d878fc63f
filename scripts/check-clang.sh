#!/usr/bin/env bash
# Checks that every C++ file of tp compiles with clang 22 as well as with
# gcc: each compile command of the build (compile_commands.json) is rerun
# with clang++-22 -fsyntax-only. The sanitizer and fuzz builds use clang; a
# construct only gcc accepts (structured bindings captured by lambdas
# before C++20, say) would otherwise break them unseen, as CI builds with
# gcc. scripts/test.sh runs it after the build.
#
#   scripts/check-clang.sh            the tree ${TP_BUILD_DIR:-build}
#
# A file whose check passed is not checked again while its compile command,
# its own text and every header its gcc depfile lists are unchanged (keys
# in ${XDG_CACHE_HOME:-~/.cache}/tp-check-clang): a full check takes about
# 5 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TP_BUILD_DIR:-build}
clang=$(command -v clang++-22 || true)
if [ -z "$clang" ]; then
  echo "check-clang.sh: needs clang++-22 (scripts/setup.sh installs clang-22)" >&2
  exit 1
fi
exec /usr/bin/python3 - "$build/compile_commands.json" "$clang" "$PWD" <<'EOF'
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time

commands, clang, root = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.time()


def clang_command(entry):
    args = entry["arguments"] if "arguments" in entry \
        else shlex.split(entry["command"])
    out = [clang, "-fsyntax-only", "-Wno-unknown-warning-option"]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a != "-c":
            out.append(a)
    # After the build's -fdiagnostics-color: messages go to a log.
    return out + ["-fno-color-diagnostics"]


version = subprocess.run([clang, "--version"], stdout=subprocess.PIPE,
                         text=True).stdout
cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or
                     os.path.expanduser("~/.cache"), "tp-check-clang")
os.makedirs(cache, exist_ok=True)
file_hashes = {}


def file_hash(path):
    if path not in file_hashes:
        try:
            with open(path, "rb") as f:
                file_hashes[path] = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            file_hashes[path] = "missing"
    return file_hashes[path]


def ninja_deps():
    """Object file -> the headers and sources it was built from, as Ninja
    recorded them from gcc's depfiles (`ninja -t deps`)."""
    out = subprocess.run(["ninja", "-C", os.path.dirname(commands), "-t",
                          "deps"], stdout=subprocess.PIPE, text=True).stdout
    deps, current = {}, None
    for line in out.split("\n"):
        if line and not line.startswith(" "):
            current = deps.setdefault(line.split(":")[0], [])
        elif line.strip() and current is not None:
            current.append(line.strip())
    return deps


recorded = ninja_deps()


def inputs_key(entry, command):
    """The clang version, the command, and the text of the file and of each
    header it was built from; None when Ninja recorded none."""
    args = entry["arguments"] if "arguments" in entry \
        else shlex.split(entry["command"])
    deps = recorded.get(args[args.index("-o") + 1]) if "-o" in args else None
    if not deps:
        return None
    # Paths inside the checkout are keyed relative to it: a fresh clone
    # elsewhere (CI) reuses what this one checked.
    def where(text):
        return text.replace(root, "<root>")
    h = hashlib.sha256(where(version + "\0".join(command)).encode())
    for dep in sorted(set(deps)):
        path = os.path.join(entry["directory"], dep)
        h.update(where(os.path.normpath(path)).encode() +
                 file_hash(path).encode())
    return h.hexdigest()


def check(entry):
    command = clang_command(entry)
    key = inputs_key(entry, command)
    if key and os.path.exists(os.path.join(cache, key)):
        return entry["file"], 0, "", True
    run = subprocess.run(command, cwd=entry["directory"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if run.returncode == 0 and key:
        open(os.path.join(cache, key), "w").close()
    return entry["file"], run.returncode, run.stdout, False


entries = [e for e in json.load(open(commands))
           if e["file"].endswith(".cpp") and
           os.path.realpath(e["file"]).startswith(root + "/")]
failed, unchanged = [], 0
with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
    for file, rc, output, cached in pool.map(check, entries):
        unchanged += cached
        if rc != 0:
            failed.append(file)
            sys.stdout.write(output)
print("check-clang: %d of %d C++ files compile with %s (%d unchanged since "
      "they last did; %.0f s)"
      % (len(entries) - len(failed), len(entries), os.path.basename(clang),
         unchanged, time.time() - start))
if failed:
    print("check-clang: clang rejects: " + ", ".join(
        os.path.relpath(f, root) for f in failed))
    sys.exit(1)
EOF
