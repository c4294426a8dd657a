"""Ctrl-C in a compiled loop: the loop asks the host now and then, and stops through the error state.

A running XLA ``while_loop`` never returns to Python, so Python's SIGINT
handler (which raises `KeyboardInterrupt` in the main thread) cannot run
until it ends, which for an endless loop is never. So a loop that may run
long (no bound known when compiling, or a large one: `interruptible`)
carries a countdown, and when it reaches zero it calls the host
(``io_callback``), which says whether a SIGINT came meanwhile:

- the first host call of a program's call, in the main thread (where the
  CPU backend runs them), replaces Python's default SIGINT handler, until
  the call returns, by one that only notes the Ctrl-C; a later host call
  sees the note. (A Ctrl-C before that first call reaches Python's own
  handler inside JAX's callback and fails the call; it is reported the same
  way.) On a GPU the host calls run on a thread of the device's, while the
  main thread waits inside JAX, where Python's handlers never run: there the
  watch takes Ctrl-C from the call's start (`Watch.run`), and a host call
  learns of it from the signal's *wakeup byte* (`signal.set_wakeup_fd`),
  which the interpreter writes the moment the signal arrives, on any thread;
  a watch whose host call ran on another thread takes Ctrl-C from the start
  of every later call, whatever the device;
- a Ctrl-C fails the loop's site in the error state (`autoloop.backends.jax.
  checks`), so that loop and every loop around it stop at once and nothing
  after them runs; the host then raises `KeyboardInterrupt` from the user's
  line of the loop that heard it, with ``autoloop_location`` for the
  command line's one-line report;
- the countdown adapts: the first is sized from the body's work (about
  2**22 element operations, a few milliseconds on a CPU; a GPU or TPU
  makes elements about a thousand times faster but spends about 10 µs on
  each iteration itself, launching its kernels and reading its condition
  back, so a scalar loop there asks after about 500 iterations, not a
  million, and a loop of 512² matrix products not after every fourth),
  later ones from the time the last took (about 0.05 s), so a short loop
  never calls the host and a long one calls it a few times a second.

A program with a host call in it costs XLA about 0.3 µs more per call, and
the chunks about 0.2 µs more, although a short loop never makes the call: a
tenth of a 5 µs call. So a program with one scalar result also has a *quick*
form (`JaxProgram`), run first: each watched loop runs at most its first
countdown of iterations with no host call in it (`capped_loop`), and one
that would run longer *gives up*: its site fails, which stops the program,
and the result is `give_up_marker` of its dtype. The host then runs the
watched program, which gives the answer (also where the true result is the
marker: that costs a second run, never a wrong answer). The quick form
gives up exactly where the watched one would first call the host, so a
Ctrl-C waits no longer than it did, but for the watched program's compiling
on the first call that runs long. A Ctrl-C that comes while the quick
program runs is raised from the program's first watched loop; the watched
call takes Ctrl-C from its start (`Watch.run`'s `listen`: a Ctrl-C raised
while JAX compiles can be lost in its clean-up). After a call that ran long
(`Watch.ran_long`), the next call goes to the watched program
directly, so a long loop does not pay for its quick form each time.

    >>> watch = Watch(first_loop_location)
    >>> outputs = watch.run(jitted, inputs)    # a Ctrl-C: KeyboardInterrupt from the loop's line
"""

from __future__ import annotations

import functools
import os
import signal
import threading
import time

import numpy as np

from autoloop.errors import raise_at
from autoloop.ir.trips import trip_count

LONG_LOOP = 1 << 16  # a loop with a bound above this many iterations is watched as one without a bound
FIRST_WORK = 1 << 22  # element operations (about a nanosecond each on a CPU) before a loop's first host call
ACCELERATOR_ITERATION_WORK = 1 << 13  # a GPU's or TPU's own time for an iteration (~10 µs), in those operations
ACCELERATOR_SPEEDUP = 1000  # how many times faster a GPU or TPU makes elements than a CPU, roughly
TARGET_SECONDS = 0.05  # time between host calls that later countdowns aim at
LONGEST_COUNTDOWN = 1 << 24


def interruptible(node) -> bool:
    """Whether the ``While`` `node` may run long enough to need to be interruptible."""
    upper = trip_count(node).upper
    return upper is None or upper > LONG_LOOP


def interrupt_site(node):
    """The site rule of a ``While`` (`autoloop.backends.jax.marks.checked`): an interruptible loop's
    check fails when Ctrl-C stopped it, and raises `KeyboardInterrupt` from the user's loop line."""
    if not interruptible(node):
        return None

    def reproduce():
        interrupt = KeyboardInterrupt()
        interrupt.autoloop_location = node.location
        raise_at(interrupt, node.location)
    return (), reproduce


def first_countdown(body, platform: str = "cpu") -> int:
    """Iterations before a loop's first host call: about `FIRST_WORK` element operations of `body` on a CPU;
    on another `platform`, each iteration's elements count `ACCELERATOR_SPEEDUP` times less and the iteration
    itself `ACCELERATOR_ITERATION_WORK`."""
    work = 0
    for node in body.walk():
        for value in node.outputs:
            work += max(1, value.shape.num_elements() or 1)
    if platform != "cpu":
        work = ACCELERATOR_ITERATION_WORK + work // ACCELERATOR_SPEEDUP
    return int(np.clip(FIRST_WORK // max(work, 1), 1, LONGEST_COUNTDOWN))


def give_up_marker(dtype):
    """The result of a quick program that gave up (see the module docstring), a numpy scalar of `dtype`:
    an integer type's least value (an unsigned type's greatest), the finite float next to a float type's
    least; None for other dtypes (a bool has no value to spare), whose programs have no quick form.

        >>> give_up_marker(np.int32)
        np.int32(-2147483648)
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        return dtype.type(np.iinfo(dtype).min)
    if dtype.kind == "u":
        return dtype.type(np.iinfo(dtype).max)
    if dtype in (np.float16, np.float32, np.float64):
        return np.nextafter(dtype.type(np.finfo(dtype).min), dtype.type(0))
    return None


class Watch:
    """One program's watch for Ctrl-C; see the module docstring. `stopped_at` is the user's line of the
    loop a Ctrl-C stopped in the current call, or None; `ran_long` whether the last watched call asked
    the host at all (ran past a loop's first countdown)."""

    def __init__(self, first_loop):
        import jax
        self.first_loop = first_loop  # the line blamed when Ctrl-C came before any loop asked
        self.stopped_at = None
        self.ran_long = False
        # Take Ctrl-C from each call's start: where host calls run off the main thread (a GPU's do), the first
        # host call is too late to replace Python's handler.
        self.listen_first = jax.default_backend() != "cpu"
        self._interrupted = False
        self._previous = None  # the SIGINT handler replaced while a call runs, if any
        self._wakeup = None  # the wakeup descriptor replaced while a call runs (`WakeupBytes.take`), if any
        self._runtime_error = jax.errors.JaxRuntimeError

    def run(self, call, inputs, listen=False):
        """``call(*inputs)``, watched; a Ctrl-C while it ran is a `KeyboardInterrupt` from the loop's line.
        `listen`: take Ctrl-C from the start (in the main thread), not from the first host call: for a call
        that may compile its program first, since a Ctrl-C that Python's handler raises while JAX compiles
        may be lost in its clean-up (a weak reference's callback prints it and goes on)."""
        self.stopped_at, self._interrupted, self.ran_long = None, False, False
        if listen or self.listen_first:
            self._listen()
        try:
            outputs = call(*inputs)
        except self._runtime_error as error:
            # Ctrl-C before the first host call took it: Python's own handler raised inside JAX's callback
            # wrapper, and JAX reports that only in words.
            if "KeyboardInterrupt" not in str(error):
                raise
            self._interrupted = True
        except KeyboardInterrupt as interrupt:
            self._interrupted = True
            self.stopped_at = self.stopped_at or getattr(interrupt, "autoloop_location", None)
        finally:
            if self._previous is not None:
                WAKEUP.give_back(self._wakeup)
                signal.signal(signal.SIGINT, self._previous)
                self._previous = self._wakeup = None
        if not self._interrupted:
            return outputs
        self.raise_interrupt(self.stopped_at or self.first_loop)  # also a Ctrl-C after the last host call

    @staticmethod
    def raise_interrupt(location):
        """Raise `KeyboardInterrupt` from the user's loop line `location`, with ``autoloop_location`` set."""
        interrupt = KeyboardInterrupt()
        interrupt.autoloop_location = location
        raise_at(interrupt, location)

    def _note(self, signum, frame):
        self._interrupted = True

    def _listen(self) -> None:
        """Take Ctrl-C for this call (the first host call does, in the main thread, if Python's default
        handler has it): the loops then stop, and `run` raises."""
        if threading.current_thread() is not threading.main_thread():
            return  # only the main thread may replace Python's handler
        if self._previous is None and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._note)
            self._wakeup = WAKEUP.take()

    def ask(self, location, countdown, stamp):
        """The host call of the loop at `location`: ``(interrupted, next countdown, time in ms)``."""
        self.ran_long = True
        if threading.current_thread() is not threading.main_thread():
            self.listen_first = True  # host calls run off the main thread here: later calls listen from the start
        try:
            self._listen()
            now = np.int32(int(time.monotonic() * 1000) & 0x7FFFFFFF)
            if self._previous is not None and not self._interrupted:
                self._interrupted = WAKEUP.heard_ctrl_c()  # Python's handler may not have run yet
            if not self._interrupted:
                countdown = int(countdown)
                if stamp >= 0:
                    elapsed = max((int(now) - int(stamp)) % (1 << 31), 1) / 1000
                    countdown = int(np.clip(countdown * TARGET_SECONDS / elapsed, 1,
                                            min(8 * countdown, LONGEST_COUNTDOWN)))
                return np.bool_(False), np.int32(countdown), now
        except KeyboardInterrupt:  # Python's own handler, before ours was installed
            self._interrupted = True
        self.stopped_at = self.stopped_at or location  # the first loop to hear it: the innermost running
        return np.bool_(True), np.int32(1), np.int32(0)


class WakeupBytes:
    """The process's pipe for `signal.set_wakeup_fd`: while a watched call listens, the interpreter writes a
    byte for each signal into it as the signal arrives, whichever thread is running, before Python's
    handler runs (in the main thread, once it runs Python again). A host call on another thread reads it.

    `take` (main thread) points the wakeup descriptor at the pipe and returns the one it replaced (-1 if
    none), `give_back` restores that one and passes on the bytes of signals the call did not consume,
    `heard_ctrl_c` reads what came meanwhile, from any thread."""

    def __init__(self):
        self._pipe = None
        self._unread = bytearray()  # bytes of signals other than SIGINT, for the descriptor given back
        self._lock = threading.Lock()

    def take(self) -> int:
        if self._pipe is None:
            self._pipe = os.pipe()
            for end in self._pipe:
                os.set_blocking(end, False)
        self._drain()  # bytes of signals from before this call
        self._unread.clear()
        return signal.set_wakeup_fd(self._pipe[1], warn_on_full_buffer=False)

    def give_back(self, previous: int) -> None:
        signal.set_wakeup_fd(previous)
        unread = bytes(self._unread) + self._drain()
        if previous >= 0 and unread:
            try:  # an event loop that had the descriptor learns of the signals as if it had kept it
                os.write(previous, unread)
            except OSError:
                pass

    def heard_ctrl_c(self) -> bool:
        with self._lock:
            heard = self._drain()
            self._unread += heard.replace(bytes([signal.SIGINT]), b"")
        return signal.SIGINT in heard

    def _drain(self) -> bytes:
        chunks = []
        while True:
            try:
                chunk = os.read(self._pipe[0], 512)
            except BlockingIOError:
                return b"".join(chunks)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


WAKEUP = WakeupBytes()


def watched_loop(lowering, node, cond_fn, body_fn, carry):
    """``lax.while_loop(cond_fn, body_fn, carry)`` of an interruptible loop: run in chunks of `countdown`
    iterations, an inner loop as fast as the plain one (no host call in it: a conditional in a loop body
    costs XLA about as much as a small body), and between chunks the host call (`Watch.ask`), whose
    Ctrl-C fails the loop's site in the error state (`carry[1]`), which `cond_fn` stops at. In the quick
    program (`lowering.watching` False), `capped_loop` instead."""
    import jax
    import jax.numpy as jnp
    if not lowering.watching:
        return capped_loop(lowering, node, cond_fn, body_fn, carry)
    watch, site = lowering.facts.watch, lowering.facts.sites.by_node[node]
    shapes = (jax.ShapeDtypeStruct((), np.bool_), jax.ShapeDtypeStruct((), np.int32),
              jax.ShapeDtypeStruct((), np.int32))

    def ask(countdown, stamp):
        # A pure callback, though it reads the watch: a program with an effect (io_callback) loses JAX's fast
        # dispatch (0.5 ms a call); its results are used, so XLA keeps it and calls it each time it runs.
        return jax.pure_callback(functools.partial(watch.ask, node.location), shapes, countdown, stamp)

    def keep(countdown, stamp):
        return jnp.bool_(False), countdown, stamp

    def chunk(state):
        carry, (countdown, stamp) = state
        carry, done = jax.lax.while_loop(lambda inner: cond_fn(inner[0]) & (inner[1] < countdown),
                                         lambda inner: (body_fn(inner[0]), inner[1] + 1), (carry, jnp.int32(0)))
        stopped, countdown, stamp = jax.lax.cond(done >= countdown, ask, keep, countdown, stamp)
        values, errors, *others = carry
        return (values, errors.fail(site, stopped), *others), (countdown, stamp)

    first = (jnp.int32(first_countdown(node.attrs["body"], jax.default_backend())), jnp.int32(-1))
    carry, _ = jax.lax.while_loop(lambda state: cond_fn(state[0]), chunk, (carry, first))
    return carry


def capped_loop(lowering, node, cond_fn, body_fn, carry):
    """The quick program's form of an interruptible loop: at most its first countdown of iterations and no
    host call; one that ran them all gives up (it may have had more to run): its site fails in the error
    state, which stops the program, and the program's result is then the marker (`JaxProgram`)."""
    import jax
    import jax.numpy as jnp
    site = lowering.facts.sites.by_node[node]
    countdown = first_countdown(node.attrs["body"], jax.default_backend())
    carry, done = jax.lax.while_loop(lambda inner: cond_fn(inner[0]) & (inner[1] < countdown),
                                     lambda inner: (body_fn(inner[0]), inner[1] + 1), (carry, jnp.int32(0)))
    values, errors, *others = carry
    return (values, errors.fail(site, done >= countdown), *others)
