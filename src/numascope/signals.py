"""SIGINT (Ctrl-C) and SIGTERM (Slurm's time limit, `timeout`, a shutdown) stop a command the
same way: the measurement in progress stops between two units of work, what finished is kept
(and stored by `numascope run`), and the command exits 128 + the signal (130, 143).

The CLI installs one handler for both (`handled()`). It raises `Stop`, a KeyboardInterrupt
naming the signal, so every path that handles Ctrl-C handles SIGTERM too. The C core sets its
own stop flag from a C handler chained in front of this one (`_core.watch_signals`), so a long
C call notices the signal while it runs without the GIL, not only when it returns.

`deferred()` holds a signal back over a few lines that must finish (the final store write):
it is raised when the block ends.

One stop is one stop: a signal that arrives once a stop is under way (Slurm's time limit
sends SIGTERM twice, milliseconds apart; a user presses Ctrl-C again) is noted and changes
nothing, so the first stop's cleanup (what finished, stored) is never cut short by the
second. A process that must die at once is sent SIGKILL, as every launcher does after its
grace time."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stop(KeyboardInterrupt):
    """A stop signal arrived; `signum` says which."""

    def __init__(self, signum: int):
        super().__init__(name(signum))
        self.signum = signum


class _State:
    deferring = 0
    pending: int | None = None     # a signal held back by deferred()
    received: int | None = None    # the signal that stopped the command (the first)
    repeats = 0                    # stop signals after the first (ignored)


def name(signum: int) -> str:
    return signal.Signals(signum).name


def signum_of(e: BaseException | None) -> int:
    """The signal behind an interruption: the exception's own, else the one the handler
    saw, else SIGINT (a plain KeyboardInterrupt)."""
    return getattr(e, "signum", None) or _State.received or signal.SIGINT


def exit_code(e: BaseException | None = None) -> int:
    """128 + the signal: 130 for SIGINT, 143 for SIGTERM (what a shell reports)."""
    return 128 + int(signum_of(e))


def received() -> int | None:
    """The stop signal the CLI's handler saw first in this command, if any."""
    return _State.received


def _handler(signum: int, frame: FrameType | None) -> None:
    if _State.received is not None:   # a stop is under way: a second signal changes nothing
        _State.repeats += 1
        return
    _State.received = signum
    if _State.deferring:
        _State.pending = _State.pending or signum
        return
    raise Stop(signum)


def _watch_in_core() -> None:
    """signal.signal() replaced the C core's chained handler: chain it again (only if the
    core is loaded; importing it later chains it at import)."""
    core = sys.modules.get("numascope._core")
    if core is not None and hasattr(core, "watch_signals"):
        core.watch_signals()


@contextmanager
def handled() -> Iterator[None]:
    """Stop on SIGINT and SIGTERM for the duration of a command; the previous handlers are
    restored afterwards. A signal the process was started ignoring (SIG_IGN, e.g. SIGINT of
    a background job) stays ignored. Outside the main thread this does nothing."""
    previous: dict[int, object] = {}
    try:
        for s in SIGNALS:
            if signal.getsignal(s) != signal.SIG_IGN:
                previous[s] = signal.signal(s, _handler)
    except ValueError:   # not the main thread: signals are not ours to handle here
        pass
    _State.received, _State.pending, _State.repeats = None, None, 0
    _watch_in_core()
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)  # type: ignore[arg-type]
        _watch_in_core()


@contextmanager
def deferred() -> Iterator[None]:
    """Finish the block before acting on a stop signal: one that arrives inside it is raised
    (as Stop) when it ends — unless the block raised something else, which then wins. Only
    with the CLI's handler installed; elsewhere the block runs as it is."""
    _State.deferring += 1
    ok = False
    try:
        yield
        ok = True
    finally:
        _State.deferring -= 1
        if not _State.deferring and _State.pending:
            signum, _State.pending = _State.pending, None
            if ok:
                raise Stop(signum)
