"""The dataflow executor's thread pool: the process's threads, lent to one run at a time.

    pool = Workers(run)          # one run's pool: `run(task)` on a thread for each task
    pool.put(task, busy)         # a thread more if fewer than `busy` are lent
    pool.stop()                  # every lent thread finishes its task and goes back idle

A thread lent to a run serves only that run until it stops; then it waits
idle, holding nothing of the run, for the next run that needs one. Runs
from several threads at once each borrow their own; a forked child, which
has none of its parent's threads, starts its own.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading


class Workers:
    """Threads calling ``run(task)`` for each task `put`, until `stop`: one run's pool.

    A bare queue, not a ``ThreadPoolExecutor``: its ``submit`` takes locks
    that a worker finishing a task takes too (its idle semaphore's), and in
    a profile on a loaded machine the scheduling thread waited there about
    1 ms a call. The threads are the process's, lent to one run at a time
    (`_lend_thread`): starting one cost about 0.1 ms of the scheduling
    thread's time, twice a run, and a run of a 40-iteration loop is 20 ms.
    """

    def __init__(self, run):
        self.run = run
        self.tasks = queue.SimpleQueue()
        self.threads = 0
        self.returned = queue.SimpleQueue()  # a None from each thread that has finished its last task

    def put(self, task: list, busy: int) -> None:
        """Give `task` to a thread, taking one more if fewer than `busy` (the tasks not yet done) are there."""
        if self.threads < busy:
            self.threads += 1
            _lend_thread(self)
        self.tasks.put(task)

    def stop(self) -> None:
        """Let every thread finish its task and go back; return when they have."""
        for _ in range(self.threads):
            self.tasks.put(None)
        for _ in range(self.threads):
            self.returned.get()


_parked: list = []  # the inboxes of the process's idle worker threads: put a `Workers` in one to lend it
_parking = threading.Lock()


def _lend_thread(workers: Workers) -> None:
    """Lend an idle thread of the process to `workers` (a new one if none is idle)."""
    with _parking:
        inbox = _parked.pop() if _parked else None
    if inbox is None:
        inbox = queue.SimpleQueue()
        threading.Thread(target=_serve, args=(inbox,), name=f"autoloop-dataflow_{next(_thread_numbers)}",
                         daemon=True).start()
    inbox.put(workers)


def _serve(inbox: queue.SimpleQueue) -> None:
    """A worker thread's life: run the tasks of each `Workers` it is lent to, then wait idle for the next."""
    while True:
        workers = inbox.get()
        run, tasks = workers.run, workers.tasks
        task = tasks.get()
        while task is not None:
            run(task)  # which empties it: this frame keeps nothing of a task while it waits for the next
            task = tasks.get()
        returned = workers.returned
        del workers, run, tasks  # no task, kernel or value of a finished run stays alive while the thread idles
        with _parking:
            _parked.append(inbox)
        returned.put(None)


def _forget_threads() -> None:
    """In a forked child: the parent's threads are not there."""
    global _parking
    _parked.clear()
    _parking = threading.Lock()


_thread_numbers = itertools.count()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_threads)
