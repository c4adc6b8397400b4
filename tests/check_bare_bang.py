#!/usr/bin/env python3
"""Rejects a bare `! cmd` anywhere but last in a bats test or function.

bats runs a test under `set -e`, and bash never exits on a command negated with `!`: `! cmd`
on any line but the last passes whatever cmd does (`! true; echo after` passes). Only the
test's last command sets its status. Write `run ! cmd`, `! cmd || false` or an explicit
`[ ... ]` instead.

usage: check_bare_bang.py FILE.bats...   prints FILE:LINE for each one found, exits 1 if any
"""
import re
import sys

BLOCK_START = re.compile(r"^(@test\s.*|(function\s+)?[A-Za-z_][\w:-]*\s*\(\s*\))\s*\{\s*$")
BLOCK_END = re.compile(r"^\}\s*$")
HEREDOC = re.compile(r"(?<!<)<<(-?)\s*(['\"]?)([A-Za-z_]\w*)\2")
# `!` opening a command: at the start of a line or after a list operator
BANG = re.compile(r"(^|;|&&|\|\|)\s*!\s")
# what makes the negation count again: a failing branch that errexit sees
RESCUED = re.compile(r"\|\|\s*(false|return\s+1|exit\s+1)\s*(#.*)?$")


def logical_lines(lines):
    """(first line number, joined text) of each command line, heredoc bodies and comments
    left out; lines continued with a backslash are joined."""
    out, pending, start, heredoc = [], "", 0, None
    for num, line in lines:
        if heredoc:
            strip_tabs, word = heredoc
            if (line.lstrip("\t") if strip_tabs else line) == word:
                heredoc = None
            continue
        match = HEREDOC.search(line)
        if match:
            heredoc = (match.group(1) == "-", match.group(3))
        text = line.strip()
        if not pending and (not text or text.startswith("#")):
            continue
        if not pending:
            start = num
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        out.append((start, pending + text))
        pending = ""
    if pending:
        out.append((start, pending))
    return out


def check(path):
    found = []
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f]
    block = None
    for num, line in enumerate(lines, 1):
        if block is None:
            if BLOCK_START.match(line):
                block = []
            continue
        if BLOCK_END.match(line):
            body = logical_lines(block)
            for start, text in body[:-1]:
                if BANG.search(text) and not text.startswith("run ") and not RESCUED.search(text):
                    found.append(start)
            block = None
            continue
        block.append((num, line))
    return found


def main(paths):
    bad = 0
    for path in paths:
        for num in check(path):
            print("%s:%d: a bare '!' before a test's last line never fails: use 'run !', "
                  "'|| false' or '[ ... ]'" % (path, num))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
