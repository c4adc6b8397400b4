"""What every stall workload knows about itself, and the lines it prints at its end.

A workload times its own steps with StepTimer (CLOCK_MONOTONIC, the clock gpuspy's records use)
and finishes with emit(), which prints one `STEP i start_ns end_ns` line per step and then one
`TRUTH {json}` line: the answer a tracer's step detection and stall ranking are checked against.

Source lines are found at run time, never written down: the line of the stall is the one in its
function whose comment starts with `# stall:` (and, where the root cause runs in another thread
or process, `# cause:`), and a step is the first loop of the step function, from its `for` line
to its last line (ast).
"""
import ast
import inspect
import json
import os
import sys
import textwrap
import threading
import time


class StepTimer:
    """Start and end of every step, and the time each step spent in its stall."""

    def __init__(self):
        self.steps = []
        self.step_cause_ns = []
        self._start = None
        self._cause = 0

    def begin(self):
        self._start = time.monotonic_ns()
        self._cause = 0

    def end(self):
        self.steps.append((self._start, time.monotonic_ns()))
        self.step_cause_ns.append(self._cause)

    def add_cause(self, ns):
        """Adds time the step spent in its stall, as the workload measured it around the call."""
        self._cause += ns

    @property
    def cause_ns(self):
        return sum(self.step_cause_ns)

    def step_ns(self):
        return sum(end - start for start, end in self.steps)


def marked_line(func, marker="stall"):
    """The absolute line number of the one line of func carrying the comment `# <marker>:`."""
    lines, first = inspect.getsourcelines(func)
    tag = "# %s:" % marker
    hits = [first + i for i, text in enumerate(lines) if tag in text]
    if len(hits) != 1:
        raise RuntimeError("%s has %d lines marked %r" % (func.__qualname__, len(hits), tag))
    return hits[0]


def loop_lines(func):
    """[first, last] source lines of func's first for/while loop: the body of one step."""
    lines, first = inspect.getsourcelines(func)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)):
            return [first + node.lineno - 1, first + node.end_lineno - 1]
    raise RuntimeError("%s has no loop" % func.__qualname__)


def site(func, marker="stall"):
    """{"function", "file", "line"} of func's marked line, as a Python stack would show it."""
    return {
        "function": func.__name__,
        "file": os.path.abspath(inspect.getsourcefile(func)),
        "line": marked_line(func, marker),
    }


def emit(kind, timer, where, what, step_function, cause=None, **extra):
    """Prints the STEP lines and the TRUTH line; `extra` adds workload-specific keys."""
    measured = {"step_ns": timer.step_ns(), "cause_ns": timer.cause_ns,
                "step_cause_ns": timer.step_cause_ns}
    measured["share"] = round(timer.cause_ns / measured["step_ns"], 4) if measured["step_ns"] else 0
    # the smallest share of any one step: the stall dominates every step, not just the sum
    measured["min_step_share"] = round(min(
        (c / (end - start) for c, (start, end) in zip(timer.step_cause_ns, timer.steps)),
        default=0), 4)
    truth = {
        "steps": len(timer.steps),
        "kind": kind,
        "pid": os.getpid(),
        "main_tid": threading.main_thread().native_id,
        "where": where,
        "what": what,
        "step_function": step_function.__name__,
        "step_lines": loop_lines(step_function),
        "measured": measured,
    }
    if cause:
        truth["cause"] = cause
    truth.update(extra)
    out = ["STEP %d %d %d" % (i, start, end) for i, (start, end) in enumerate(timer.steps)]
    out.append("TRUTH " + json.dumps(truth, sort_keys=True))
    # one write at the end: nothing printed inside a step adds syscalls to it
    sys.stdout.write("\n".join(out) + "\n")
    sys.stdout.flush()


def steps_library_path():
    """Where `make stalls-targets` puts libsteps_kernels.so (BUILD as the Makefile and tests)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    build = os.environ.get("BUILD") or os.path.join(root, "build")
    return os.path.join(build, "targets", "stalls", "libsteps_kernels.so")
