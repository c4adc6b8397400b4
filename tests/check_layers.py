#!/usr/bin/env python3
"""Checks the layout rules of docs/ARCHITECTURE.md on gpuspy's own C code (lib/, output/, loader/).

  - every project include is written from the root ("lib/key_index.h") and names a file that exists;
  - includes point down the layers: a folder includes itself or a folder of a lower layer only
    (lib < bpf/records.h < output/trace < output/model < output/analysis < reports, exports < loader/...), never
    one beside it on the same layer; BPF skeletons (build/*.skel.h) belong to loader/ only;
  - no include cycle between modules (x.c and x.h are one module);
  - a header declares the functions of its own .c file only (x.h: those x.c defines), so no
    header hides an arrow from the file that defines a function up to the files that call it;
  - at most 15 .c files in a folder, at most 800 lines in a file.

usage: tests/check_layers.py [ROOT]   (default: the repository). Exit 1 with one line per finding.
"""
import os
import re
import sys

# (folder, layer): a folder may include its own files and those of folders on lower layers
LAYERS = [
    ('lib', 0),
    ('bpf', 1),  # records.h: the record layout the BPF programs and the trace share
    ('output/trace', 2),
    ('output/model/gpu', 3),
    ('output/model', 4),
    ('output/export/perfetto', 5),  # handed the Chrome writer by output/export/: includes none of it
    ('output/analysis', 5),  # answers read from the model: steps, where their time went, stalls
    ('output/report/base', 6),
    ('output/export', 6),
    ('output/report/cuda', 7),
    ('output/report/gpu', 7),
    ('output/report/host', 7),
    ('output/report', 8),
    ('loader/proc', 10),
    ('loader/session', 11),
    ('loader/python', 12),
    ('loader/bridge', 12),
    ('loader/probes', 13),
    ('loader/record', 14),
    ('loader/live', 15),
    ('loader', 16),
]
CODE_DIRS = ('lib', 'output', 'loader')
MAX_C_FILES = 15
MAX_LINES = 800
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# a function defined at file scope (not static): its name before the parameters and the body
DEFINITION = re.compile(r'^(?!static\b)[a-z][^\n;]*?\b(\w+)\([^;{]*?\)\s*\{', re.M | re.S)
# a function declared in a header: a prototype at the start of a line, not static inline
PROTOTYPE = re.compile(r'^(?!typedef\b|static\b|extern\b)[a-z][^\n;{}()]*?\b(\w+)\([^;{}]*\)\s*'
                       r'(?:__attribute__\(\(.*?\)\))?;', re.M)
COMMENT = re.compile(r'/\*.*?\*/', re.S)


def folder_of(path):
    return os.path.dirname(path)


def layer_of(folder):
    for name, layer in LAYERS:
        if folder == name:
            return layer
    return None


def code_files(root):
    for top in CODE_DIRS:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(('.c', '.h')):
                    yield os.path.relpath(os.path.join(d, f), root)


def check_include(root, src, inc, problems):
    src_dir = folder_of(src)
    if inc.endswith('.skel.h') and '/' not in inc:
        if not src.startswith('loader/'):
            problems.append(f'{src}: includes the BPF skeleton "{inc}" (loader/ only)')
        return None
    if not os.path.isfile(os.path.join(root, inc)):
        problems.append(f'{src}: "{inc}" is not a path from the repository root')
        return None
    dst_dir = folder_of(inc)
    if dst_dir == src_dir:
        return inc
    have, want = layer_of(src_dir), layer_of(dst_dir)
    if have is None:
        problems.append(f'{src}: its folder {src_dir}/ has no layer in tests/check_layers.py')
    elif want is None:
        problems.append(f'{src}: includes "{inc}" from {dst_dir}/, which is no layer')
    elif want >= have:
        side = 'beside it' if want == have else 'above it'
        problems.append(f'{src}: includes "{inc}": {dst_dir}/ is {side} ({src_dir}/ may '
                        'include only lower layers)')
    return inc


def check_declarations(texts, problems):
    defined = {}
    for path, text in texts.items():
        if path.endswith('.c'):
            for name in DEFINITION.findall(text):
                defined.setdefault(name, []).append(path)
    for path, text in sorted(texts.items()):
        if not path.endswith('.h'):
            continue
        own = path[:-2] + '.c'
        for name in PROTOTYPE.findall(COMMENT.sub('', text)):
            where = defined.get(name, [])
            if where and own not in where:
                problems.append(f'{path}: declares {name}(), which {where[0]} defines (declare it '
                                f'in {where[0][:-2]}.h)')


def find_cycle(graph):
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    problems, graph, c_files, texts = [], {}, {}, {}
    for src in code_files(root):
        with open(os.path.join(root, src), errors='replace') as f:
            text = f.read()
        texts[src] = text
        lines = text.count('\n')
        if lines > MAX_LINES:
            problems.append(f'{src}: {lines} lines (at most {MAX_LINES}: split it by purpose)')
        if src.endswith('.c'):
            c_files.setdefault(folder_of(src), []).append(src)
        module = os.path.splitext(src)[0]
        for inc in INCLUDE.findall(text):
            dst = check_include(root, src, inc, problems)
            if dst and os.path.splitext(dst)[0] != module:
                graph.setdefault(module, set()).add(os.path.splitext(dst)[0])
    for folder, files in sorted(c_files.items()):
        if len(files) > MAX_C_FILES:
            problems.append(f'{folder}/: {len(files)} .c files (at most {MAX_C_FILES}: '
                            'give a capability a folder of its own)')
    check_declarations(texts, problems)
    cycle = find_cycle(graph)
    if cycle:
        problems.append('include cycle: ' + ' -> '.join(cycle))
    for p in problems:
        print(f'check_layers: {p}')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
