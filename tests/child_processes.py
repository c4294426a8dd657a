"""What tests that start a child process and interrupt it share."""

import signal


def default_sigint():
    """In the child before it starts Python (``preexec_fn``): Ctrl-C's default action, even where the test run
    itself was started with SIGINT ignored (a background job of a shell), since only then does Python raise
    KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
