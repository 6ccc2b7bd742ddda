"""numascope.signals in this process: real signals sent to ourselves with os.kill."""

import os
import signal

import pytest
from test_run import FakeBench, fake_suite  # noqa: F401 — fake_suite is a fixture

from numascope import signals
from numascope.cli import main as cli
from numascope.results.store import Store


def _kill_self(signum: int) -> None:
    os.kill(os.getpid(), signum)
    for _ in range(1000):   # bytecodes: the interpreter runs the Python handler meanwhile
        pass


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_handler_raises_stop_naming_the_signal(signum):
    with signals.handled():
        with pytest.raises(signals.Stop) as ei:
            _kill_self(signum)
        assert signals.received() == signum
    assert ei.value.signum == signum and isinstance(ei.value, KeyboardInterrupt)
    assert signals.exit_code(ei.value) == 128 + signum
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL   # restored


def test_deferred_block_finishes_then_the_signal_is_raised():
    reached = False
    with signals.handled(), pytest.raises(signals.Stop) as ei, signals.deferred():
        _kill_self(signal.SIGTERM)
        _kill_self(signal.SIGINT)   # a second one changes nothing: the first is raised
        reached = True
    assert reached and ei.value.signum == signal.SIGTERM


def test_a_signal_during_the_final_store_write_leaves_the_record_finished(
        fake_suite, tmp_path, monkeypatch, capsys):  # noqa: F811
    """Ctrl-C stops the run; a second Ctrl-C arrives while the record is being finished:
    the write completes, then the command ends (130)."""
    monkeypatch.setattr(FakeBench, "interrupt_at", "fake_one case 1")
    finish = Store.finish_run

    def finish_with_a_second_ctrl_c(self, rec):
        _kill_self(signal.SIGINT)
        finish(self, rec)

    monkeypatch.setattr(Store, "finish_run", finish_with_a_second_ctrl_c)
    db = tmp_path / "runs.db"
    assert cli(["run", "--store", str(db), "--no-report"]) == 130
    assert "numascope: interrupted (SIGINT)" in capsys.readouterr().err
    with Store.open(db) as st:
        (summary,) = st.list_runs()
        rec = st.get_run(summary.run_id)
    assert rec.status == "interrupted" and rec.finished is not None
    assert [r.case for r in rec.results] == ["fake_one case 0"]
    assert {s.name: s.status for s in rec.stages}["one"] == "interrupted"
