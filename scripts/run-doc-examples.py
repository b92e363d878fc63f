#!/usr/bin/python3
"""Docs as tests: run every shell example of README.md and docs/*.md.

Which blocks run
  Every fenced block whose info string starts with `sh`, `bash` or `shell`
  is an example and runs; so is every ```python block (docs/Python.md),
  run by this script's python3 with PYTHONPATH=build/python. Other fences (none, `json`, `mlir`, ...) are file
  contents or expected output and do not. A ```console fence is an error:
  write commands as ```sh so that they are tested.

What is skipped, and how it is marked
  An example is skipped only when the last non-blank line before its fence
  is one of these italic lines (so a reader sees the mark too):

      *Needs a GPU: not run by the docs test.*
      *Needs two machines: not run by the docs test.*
      *Takes minutes: not run by the docs test.*

  optionally with a few words before the colon ("*Takes minutes (builds
  everything): not run by the docs test.*"). One mark skips only where
  something is missing:

      *Needs the CUDA toolkit: skipped by the docs test where there is none.*

  runs the example where the toolkit tp-compile would use has libdevice and
  ptxas ($CUDA_ROOT, $CUDA_HOME, $CUDA_PATH, else /usr/local/cuda) and
  skips it elsewhere. Skipped examples are listed in the report with their
  reason. A line that mentions "by the docs test" but has another form is
  an error, so a typo cannot hide an example.

How each example runs
  In a fresh scratch folder that holds a symbolic link to every top-level
  entry the repository tracks (README.md, docs/, scripts/, test/, ...) and
  `build` -> the build folder, so that the relative paths of the examples
  (build/bin/tp-compile, test/models/...) work and what they write (out/,
  y.npy) lands in the scratch folder, not in the repository. The block runs
  as one `bash -e -o pipefail -x` script (a failing command fails the
  example), under a time limit (--timeout, seconds), in its own process
  group. A failure reports the block's file:line, the command that failed
  (the last one bash traced, with its doc line) and the output. What an
  example leaves in its scratch folder must be ignored by the repository's
  .gitignore (git check-ignore), so that running the examples from the
  repository root leaves `git status` clean.

Links
  Every relative link of those pages ([text](path), [text]: path) must
  name a file or folder the repository tracks (inside it: no `../shared`).
  Nor may any other text of them, code included, name a `../` path that
  leaves the repository: a user's clone has nothing beside it.

Usage
  /usr/bin/python3 scripts/run-doc-examples.py [--build-dir build] [--repo .]
      [--timeout 120] [--keep] [--list] [PAGE...]

Standard library only. Exit status 0 when every example that runs passes
and every link resolves.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SHELL_LANGS = {"sh", "bash", "shell"}
PYTHON_LANGS = {"python", "py"}
MARK_RE = re.compile(
    r"^\*(Needs a GPU|Needs two machines|Takes minutes)([^*:]*): "
    r"not run by the docs test\.\*$")
TOOLKIT_RE = re.compile(
    r"^\*Needs the CUDA toolkit([^*:]*): skipped by the docs test where "
    r"there is none\.\*$")
FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
LINK_RE = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF_RE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
CODESPAN_RE = re.compile(r"(`+)(?:.+?)\1")


class Block:
    def __init__(self, page, line, lang, text, skip):
        self.page, self.line, self.lang, self.text, self.skip = \
            page, line, lang, text, skip

    @property
    def where(self):
        return "%s:%d" % (self.page, self.line)


def parse_page(repo, page, errors):
    """The fenced blocks of a page and the relative links outside them."""
    with open(os.path.join(repo, page), encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, links = [], []
    i = 0
    last_text = None  # the last non-blank line outside blocks
    while i < len(lines):
        line = lines[i]
        m = FENCE_RE.match(line)
        if not m:
            if line.strip():
                last_text = line.strip()
                prose = CODESPAN_RE.sub("", line)
                for target in LINK_RE.findall(prose):
                    links.append((i + 1, target))
                d = REFDEF_RE.match(line)
                if d:
                    links.append((i + 1, d.group(1)))
            i += 1
            continue
        fence, lang = m.group(2), m.group(3).lower()
        start = i + 1  # 1-based line of the opening fence
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        skip = None
        if last_text is not None:
            mk = MARK_RE.match(last_text)
            tk = TOOLKIT_RE.match(last_text)
            if mk:
                skip = (mk.group(1) + mk.group(2)).strip()
            elif tk:
                missing = cuda_toolkit_missing()
                if missing:
                    skip = "needs the CUDA toolkit: " + missing
            elif "by the docs test" in last_text:
                errors.append("%s:%d: malformed skip mark %r (see "
                              "scripts/run-doc-examples.py for the forms)"
                              % (page, start - 1, last_text))
        if lang == "console":
            errors.append("%s:%d: ```console block: fence commands as ```sh "
                          "so that the docs test runs them" % (page, start))
        if skip and lang not in SHELL_LANGS | PYTHON_LANGS:
            errors.append("%s:%d: skip mark before a ```%s block, which is "
                          "not run anyway" % (page, start, lang or ""))
        blocks.append(Block(page, start, lang, "\n".join(body), skip))
        last_text = None
    return blocks, links


OUTSIDE_RE = re.compile(r"(?<![\w./-])((?:\.\./)+[\w.-]*)")


def check_outside_paths(repo, page):
    """`../` paths in a page's text that leave the repository."""
    bad = []
    with open(os.path.join(repo, page), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            for target in OUTSIDE_RE.findall(line):
                full = os.path.normpath(os.path.join(repo, os.path.dirname(page),
                                                     target))
                rel = os.path.relpath(full, repo)
                if rel == ".." or rel.startswith(".." + os.sep):
                    bad.append("%s:%d: '%s' names a folder outside the "
                               "repository" % (page, n, target))
    return bad


# The build the examples run on (set by main): CUDA examples also need its
# CUDA runtime (lib/libtprt_cuda.so), which builds without the toolkit or
# the sanitizer build (scripts/sanitize.sh) lack.
BUILD_DIR = None


def cuda_toolkit_missing():
    """Why the CUDA toolkit tp-compile would use is missing, or None."""
    if BUILD_DIR and not os.path.exists(
            os.path.join(BUILD_DIR, "lib", "libtprt_cuda.so")):
        return "the build has no CUDA runtime (%s/lib/libtprt_cuda.so)" % BUILD_DIR
    root = None
    for var in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            root = os.environ[var]
            break
    root = root or "/usr/local/cuda"
    for need in ("nvvm/libdevice/libdevice.10.bc", "bin/ptxas"):
        if not os.path.exists(os.path.join(root, need)):
            return "no %s" % os.path.join(root, need)
    return None


def tracked_files(repo):
    """The repository's tracked paths (git ls-files), or None without git."""
    if not os.path.exists(os.path.join(repo, ".git")) or not shutil.which("git"):
        return None
    out = subprocess.run(["git", "-C", repo, "ls-files", "-z"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if out.returncode != 0:
        return None
    return [p for p in out.stdout.decode().split("\0") if p]


def check_links(repo, page, links, tracked):
    """Broken relative links of one page, as messages."""
    bad = []
    tracked_set = set(tracked) if tracked is not None else None
    tracked_dirs = set()
    if tracked is not None:
        for p in tracked:
            parts = p.split("/")
            for k in range(1, len(parts)):
                tracked_dirs.add("/".join(parts[:k]))
    for line, target in links:
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
            continue  # http:, mailto:, an anchor on the same page
        path = target.split("#", 1)[0]
        if not path:
            continue
        full = os.path.normpath(os.path.join(repo, os.path.dirname(page), path))
        rel = os.path.relpath(full, repo)
        if rel == ".." or rel.startswith(".." + os.sep):
            bad.append("%s:%d: link '%s' leaves the repository" % (page, line, target))
        elif not os.path.exists(full):
            bad.append("%s:%d: link '%s': no such file" % (page, line, target))
        elif tracked_set is not None and rel not in tracked_set \
                and rel not in tracked_dirs and rel != ".":
            bad.append("%s:%d: link '%s': not a tracked file" % (page, line, target))
    return bad


def make_scratch(repo, build_dir, tracked):
    scratch = tempfile.mkdtemp(prefix="tp-doc-example-")
    if tracked is not None:
        names = sorted({p.split("/", 1)[0] for p in tracked})
    else:
        names = sorted(n for n in os.listdir(repo)
                       if n != ".git" and not n.startswith("build"))
    for n in names:
        if n == "build":
            continue
        os.symlink(os.path.join(repo, n), os.path.join(scratch, n))
    os.symlink(build_dir, os.path.join(scratch, "build"))
    return scratch


def not_ignored(repo, scratch):
    """What an example wrote at the top of its scratch folder that the
    repository's .gitignore does not cover."""
    found = []
    for n in sorted(os.listdir(scratch)):
        p = os.path.join(scratch, n)
        if n in (".doc-example.sh", ".doc-example.py") or os.path.islink(p):
            continue
        name = n + "/" if os.path.isdir(p) else n
        r = subprocess.run(["git", "-C", repo, "check-ignore", "-q", "--no-index",
                            name], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            found.append(name)
    return found


def run_block(block, repo, build_dir, tracked, timeout, keep):
    scratch = make_scratch(repo, build_dir, tracked)
    env = dict(os.environ)
    if block.lang in PYTHON_LANGS:
        # Line N of the script is the doc's line block.line + N (the
        # traceback says which).
        script = os.path.join(scratch, ".doc-example.py")
        with open(script, "w") as f:
            f.write(block.text + "\n")
        command = [sys.executable, script]
        env["PYTHONPATH"] = os.path.join(scratch, "build", "python")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        script = os.path.join(scratch, ".doc-example.sh")
        # PS4 shows the doc line of each traced command: the block's first
        # line is the fence's line + 1, and bash's LINENO counts from 1.
        with open(script, "w") as f:
            f.write("PS4='+ %s:$((%d + LINENO)): '\nset -x\n" % (block.page, block.line - 2))
            f.write(block.text + "\n")
        command = ["bash", "-e", "-o", "pipefail", script]
    start = time.time()
    proc = subprocess.Popen(command, cwd=scratch, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    elapsed = time.time() - start
    out = out.decode(errors="replace")
    unignored = not_ignored(repo, scratch) if tracked is not None else []
    if not keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return proc.returncode, timed_out, elapsed, out, scratch, unignored


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", default=os.path.dirname(here),
                    help="the repository whose docs run (default: this script's)")
    ap.add_argument("--build-dir", default=None,
                    help="the build folder examples see as build/ (default: REPO/build)")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds per example (default 120)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the scratch folders (their paths are printed)")
    ap.add_argument("--list", action="store_true",
                    help="list the examples and skip marks, run nothing")
    ap.add_argument("pages", nargs="*",
                    help="pages relative to the repository (default: README.md, docs/*.md)")
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    build_dir = os.path.abspath(args.build_dir or os.path.join(repo, "build"))
    global BUILD_DIR
    BUILD_DIR = build_dir
    pages = args.pages or (["README.md"] + sorted(
        os.path.join("docs", p) for p in os.listdir(os.path.join(repo, "docs"))
        if p.endswith(".md")))
    tracked = tracked_files(repo)

    errors, blocks, nlinks = [], [], 0
    for page in pages:
        b, links = parse_page(repo, page, errors)
        blocks += [x for x in b if x.lang in SHELL_LANGS | PYTHON_LANGS]
        nlinks += len(links)
        errors += check_links(repo, page, links, tracked)
        errors += check_outside_paths(repo, page)
    for e in errors:
        print("docs: error: " + e)

    if not os.path.isdir(os.path.join(build_dir, "bin")):
        print("docs: error: no %s/bin; build first (scripts/build.sh) or pass "
              "--build-dir" % build_dir)
        return 1

    passed = failed = skipped = 0
    total_start = time.time()
    # The sanitizer build has no Python package (Debian's python3 cannot
    # load its instrumented libraries): its examples are skipped there.
    have_python = os.path.isdir(os.path.join(build_dir, "python", "tp"))
    for b in blocks:
        if not b.skip and not have_python and \
                (b.lang in PYTHON_LANGS or "build/python" in b.text):
            b.skip = "needs the Python package, which %s has not built" \
                % build_dir
        if b.skip:
            skipped += 1
            print("SKIP %s: %s (marked in the doc)" % (b.where, b.skip))
            continue
        if args.list:
            print("RUN  %s" % b.where)
            continue
        rc, timed_out, elapsed, out, scratch, unignored = run_block(
            b, repo, build_dir, tracked, args.timeout, args.keep)
        kept = " [%s]" % scratch if args.keep else ""
        if rc == 0 and not timed_out and not unignored:
            passed += 1
            print("PASS %s (%.1f s)%s" % (b.where, elapsed, kept))
            continue
        failed += 1
        if rc == 0 and not timed_out:
            print("FAIL %s: it writes %s at the repository root, which "
                  ".gitignore does not list" % (b.where, ", ".join(unignored)))
            continue
        traced = [l for l in out.split("\n") if l.startswith("+ %s:" % b.page)]
        if b.lang in PYTHON_LANGS:
            lines = re.findall(r'File ".*\.doc-example\.py", line (\d+)', out)
            traced = ["+ %s:%d: (python)" % (b.page, b.line + int(lines[-1]))] \
                if lines else []
        why = ("timed out after %g s" % args.timeout) if timed_out \
            else "exit status %d" % rc
        print("FAIL %s (%s, %.1f s)%s" % (b.where, why, elapsed, kept))
        if traced:
            print("  failing command: " + traced[-1][2:])
        print("  the example:")
        for l in b.text.split("\n"):
            print("    | " + l)
        tail = out.rstrip("\n").split("\n")[-60:]
        print("  its output (last %d lines, '+ file:line:' are bash's trace):" % len(tail))
        for l in tail:
            print("    > " + l)
    if args.list:
        print("docs: %d examples to run, %d skipped"
              % (len(blocks) - skipped, skipped))
        return 1 if errors else 0
    print("docs: %d examples passed, %d failed, %d skipped (marked in the "
          "doc); %d links checked, %d errors (%.0f s)"
          % (passed, failed, skipped, nlinks, len(errors),
             time.time() - total_start))
    return 1 if failed or errors else 0


if __name__ == "__main__":
    sys.exit(main())
