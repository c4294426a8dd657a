"""What a `Session.run` did: `RunOptions`, `RunMetadata`, and `Timeline`, its step as a Chrome trace.

    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    sess.run(result, options=options, run_metadata=metadata)
    metadata.step_stats.dev_stats[0].node_stats   # one NodeExecStats per kernel run: start, end, thread
    metadata.loops                                # how each loop ran: compiled, or as frames, and why
    with open("step.json", "w") as f:
        f.write(tf.timeline.Timeline(metadata.step_stats).generate_chrome_trace_format())

Open the file in ``chrome://tracing`` or https://ui.perfetto.dev: one row
per thread, one box per kernel run, named after its node and labelled with
its iteration (``while/body/Mul [iteration 3]``), so iterations that
overlap (``parallel_iterations`` > 1 with large kernels on the thread
pool) show as boxes side by side. A loop compiled into one node (the cost
rule, `autoloop.execute.dataflow.plan`) is one box for the whole loop.

As in TensorFlow, `step_stats` is filled only with a trace level above
``NO_TRACE``; `loops` is filled whenever `run_metadata` is given. Times
are in microseconds since the epoch (``all_start_micros``) and relative to
the start (``all_end_rel_micros``), as TensorFlow's ``NodeExecStats``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field


class RunOptions:
    """Options of one `Session.run`: its `trace_level` (``NO_TRACE``, ..., ``FULL_TRACE``)."""

    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3

    def __init__(self, trace_level: int = 0):
        if isinstance(trace_level, bool) or trace_level not in (0, 1, 2, 3):
            raise ValueError(f"RunOptions(trace_level={trace_level!r}): expected one of RunOptions.NO_TRACE, "
                             f"SOFTWARE_TRACE, HARDWARE_TRACE or FULL_TRACE (0 to 3)")
        self.trace_level = trace_level

    def __repr__(self):
        return f"RunOptions(trace_level={self.trace_level})"


@dataclass
class NodeExecStats:
    """One kernel run: its node, iteration (tags from the outermost loop in), times and thread."""

    node_name: str
    op: str
    iteration: tuple
    all_start_micros: int
    all_end_rel_micros: int
    thread_id: int
    thread_name: str = ""

    @property
    def timeline_label(self) -> str:
        where = f" [iteration {'.'.join(map(str, self.iteration))}]" if self.iteration else ""
        return f"{self.node_name} = {self.op}(){where}"


@dataclass
class DeviceStepStats:
    device: str = "/job:localhost/replica:0/task:0/device:CPU:0"
    node_stats: list = field(default_factory=list)


@dataclass
class StepStats:
    dev_stats: list = field(default_factory=list)


class RunMetadata:
    """Filled by `Session.run`: `step_stats` (with tracing on) and `loops` (each loop's `FramePlan`)."""

    def __init__(self):
        self.step_stats = StepStats()
        self.loops: list = []

    def record(self, plan, trace, clock_offset: float) -> None:
        """Fill this from a run of `plan`: its loops, and its kernel runs if `trace` is a list."""
        self.loops = list(plan.frames)
        if trace is None:
            return
        stats = []
        for node, tags, start, end, thread, thread_name in sorted(trace, key=lambda entry: entry[2]):
            start_micros = int((start + clock_offset) * 1e6)
            stats.append(NodeExecStats(node.name, node.op, tuple(tags), start_micros,
                                       max(int((end - start) * 1e6), 0), thread, thread_name))
        self.step_stats = StepStats([DeviceStepStats(node_stats=stats)])

    def __repr__(self):
        count = sum(len(device.node_stats) for device in self.step_stats.dev_stats)
        return f"<RunMetadata: {count} node runs, {len(self.loops)} loops>"


def clock_offset() -> float:
    """What to add to ``time.perf_counter()`` to get seconds since the epoch."""
    return time.time() - time.perf_counter()


class Timeline:
    """A step's `StepStats` as a Chrome trace (``chrome://tracing``, Perfetto's JSON format)."""

    def __init__(self, step_stats: StepStats):
        self.step_stats = step_stats

    def generate_chrome_trace_format(self, show_dataflow: bool = False, show_memory: bool = False) -> str:
        """The JSON text: one complete event (``"ph": "X"``) per kernel run, a row per thread.

        `show_dataflow` and `show_memory` are accepted for TensorFlow's
        signature; this trace has neither arrows nor memory counters.
        """
        events: list = []
        threads: dict = {}  # (pid, thread id) -> (row, thread name)
        for pid, device in enumerate(self.step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": device.device}})
            for stats in device.node_stats:
                tid = threads.setdefault((pid, stats.thread_id), (len(threads), stats.thread_name))[0]
                events.append({"name": stats.node_name, "cat": "Op", "ph": "X", "pid": pid, "tid": tid,
                               "ts": stats.all_start_micros, "dur": stats.all_end_rel_micros,
                               "args": {"name": stats.node_name, "op": stats.op, "iteration": list(stats.iteration),
                                        "label": stats.timeline_label}})
        for (pid, ident), (tid, name) in threads.items():
            events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                           "args": {"name": name or f"thread {ident}"}})
        return json.dumps({"traceEvents": events, "displayTimeUnit": "ms"})
