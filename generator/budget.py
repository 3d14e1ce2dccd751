"""Time budgets for SymPy work that can blow up (series, limits, simplify).

Each use has a cheaper, correct fallback, so running out of time only costs
accuracy or brevity, never correctness. The budget uses SIGALRM, so it
applies in the main thread on POSIX; elsewhere the work runs unbounded.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


class OutOfTime(Exception):
    """The budgeted work did not finish in time."""


@contextlib.contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Raise OutOfTime inside the block after `seconds` of wall time."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise OutOfTime()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
