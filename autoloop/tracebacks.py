"""Tracebacks that end at the user's code: autoloop's own frames left out of errors it lets through.

An error raised while autoloop converts, traces or runs a function passes
through dozens of autoloop's frames (the staging of each loop, the graph
builder, the executor). None of them helps the user, and they push the
user's own frames and the message off the screen. So at its entry points
(a `Function`'s call and `get_concrete_function`), autoloop takes its frames
out of the traceback of an error leaving it, keeps every frame of the
user's code (and of other libraries), and drops the implicit chaining that
shows an error twice ("During handling of the above exception ...") when
the chained error is one autoloop raised on the way.

Setting the environment variable ``AUTOLOOP_TRACEBACK_FILTERING=off`` keeps
every frame, for debugging autoloop itself (it is read when an error is
filtered, so it can be set in a running process).

    >>> autoloop.function(total)([1, 2, 3])
    Traceback (most recent call last):
      File "model.py", line 12, in <module>
        print(total([1, 2, 3]))
      File "model.py", line 8, in total
        s += xs[i]
    TypeError: `xs[i]` at model.py:8: `i` is a graph tensor: ...
"""

from __future__ import annotations

import os
import types

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
GENERATED_PREFIX = "<autoloop "  # the file name of converted code: "<autoloop total at model.py:4>"


def filtering_enabled() -> bool:
    return os.environ.get("AUTOLOOP_TRACEBACK_FILTERING", "on").lower() not in ("off", "0", "false", "no")


def is_internal(filename: str) -> bool:
    """Whether a frame of `filename` is autoloop's own: its package or the code it generated."""
    return filename.startswith(_PACKAGE_DIR) or filename.startswith(GENERATED_PREFIX)


def filter_traceback(error: BaseException) -> BaseException:
    """`error` with autoloop's frames taken out of its traceback (and its causes' and contexts'); returns it.

    Re-raised by the entry point that caught it, the traceback then starts with that one frame of
    autoloop's (Python adds the frame a ``raise`` runs in), followed by the user's frames only.
    """
    if not filtering_enabled():
        return error
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        current.__traceback__ = _without_internal_frames(current.__traceback__)
        context = current.__context__
        if context is not None and not current.__suppress_context__ and _raised_inside(context):
            # The same failure seen twice: autoloop caught one error and raised a clearer one.
            current.__suppress_context__ = True
        pending += [current.__cause__, None if current.__suppress_context__ else context]
    return error


def _without_internal_frames(traceback):
    frames = []
    while traceback is not None:
        frames.append(traceback)
        traceback = traceback.tb_next
    kept = [tb for tb in frames if not is_internal(tb.tb_frame.f_code.co_filename)]
    rebuilt = None
    for tb in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return rebuilt


def _raised_inside(error: BaseException) -> bool:
    """Whether `error` was raised by autoloop's package itself (its innermost frame is there), not by the
    user's statements (which run in converted code) or another library."""
    traceback = error.__traceback__
    if traceback is None:
        return False
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    return traceback.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR)
