"""What tests that start a child process and interrupt it share."""

import sys

# Run as `python -c PRELUDE ARGS...`: Ctrl-C's usual handler first, then ARGS as `python ARGS...` would run
# them (a script, or `-m module`). A test run started with SIGINT ignored (a background job of a shell)
# passes that on to its children, and Python raises KeyboardInterrupt only where SIGINT is not ignored.
PRELUDE = """
import runpy, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
args = sys.argv[1:]
if args[0] == "-m":
    sys.argv = [args[1], *args[2:]]
    runpy.run_module(args[1], run_name="__main__", alter_sys=True)
else:
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")
"""


def interruptible(arguments):
    """``[sys.executable, *arguments]`` as a command whose Python answers Ctrl-C with KeyboardInterrupt."""
    return [sys.executable, "-c", PRELUDE, *arguments]
