#!/usr/bin/env python3
"""Checks that cmc's product code is in layers: no include cycle, and no
include of a later layer.

Reads every #include "..." of the product folders (ORDER below) and fails,
naming the files, on
  - a cycle between modules: a module is a .h and its .cc (tracer/process/
    tracee.h and tracee.cc), so "a.cc includes b.h, b.cc includes a.h" is a
    cycle too, though no header includes itself;
  - an include that goes against ORDER: a file may include its own folder
    and the folders listed before it, never one listed after it.
An include naming no file of the tree (a generated header, the public
include/cmc/ ABI) is not checked.

Usage: include_layers.py [REPO_ROOT]   (default: this script's parent)
Exit status 0 when the layers hold, 1 otherwise.
"""

import os
import re
import sys

# The folders in order, lowest first: a file may include files of its own
# folder and of folders before it. app/'s plugins and render know nothing
# of each other (render, ranked after plugins, includes none of it).
ORDER = [
    "util",
    "decoder",
    "executor",
    "tracer/sandbox",
    "tracer/process",
    "tracer/net",
    "tracer/time",
    "tracer/schedule",
    "tracer/syscalls",
    "tracer/capture",
    "tracer/control",
    "tracer/snapshot",
    "tracer/backend",
    "search",
    "app/report",
    "app/plugins",
    "app/render",
    "app/cli",
    "app",
    "tools",
]

SUFFIXES = (".h", ".cc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def rank_of(path):
    """The rank in ORDER of the folder holding path, or None."""
    folder = os.path.dirname(path)
    best = None
    for rank, entry in enumerate(ORDER):
        if entry.endswith("/*"):
            parent = entry[:-2]
            if folder.startswith(parent + "/"):
                best = ORDER.index(parent) if parent in ORDER else rank
        elif folder == entry:
            best = rank
    return best


def product_files(root):
    tops = sorted({entry.split("/")[0] for entry in ORDER})
    for top in tops:
        for directory, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith(SUFFIXES):
                    yield os.path.relpath(os.path.join(directory, name), root)


def module_of(path):
    return os.path.splitext(path)[0]


def strongly_connected(graph):
    """Tarjan's algorithm, iterative; the components of two or more."""
    index = {}
    low = {}
    on_stack = set()
    stack = []
    found = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for succ in edges:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    files = list(product_files(root))
    known = set(files)
    includes = {}  # file -> the product files it includes
    problems = []
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as source:
            text = source.read()
        includes[path] = [name for name in INCLUDE.findall(text)
                          if name in known]
        if rank_of(path) is None:
            problems.append(f"{path}: its folder is not in ORDER")

    for path, names in sorted(includes.items()):
        own = rank_of(path)
        for name in names:
            theirs = rank_of(name)
            if own is None or theirs is None or theirs <= own:
                continue
            problems.append(
                f"{path} includes {name}: {os.path.dirname(name)}/ comes "
                f"after {os.path.dirname(path)}/ in the order")

    graph = {}
    for path, names in includes.items():
        edges = graph.setdefault(module_of(path), set())
        for name in names:
            if module_of(name) != module_of(path):
                edges.add(module_of(name))
    for component in strongly_connected(graph):
        members = set(component)
        edges = [f"{path} -> {name}"
                 for path, names in sorted(includes.items())
                 if module_of(path) in members
                 for name in names
                 if module_of(name) in members
                 and module_of(name) != module_of(path)]
        problems.append("include cycle between " + ", ".join(component) +
                        ":\n    " + "\n    ".join(edges))

    modules = len(graph)
    if problems:
        for problem in problems:
            print(problem)
        print(f"include_layers: {len(problems)} problem(s) in {len(files)} "
              f"files ({modules} modules)")
        return 1
    print(f"include_layers: {len(files)} files ({modules} modules) in "
          f"{len(ORDER)} ordered folders, no cycle, no include of a later "
          "layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
