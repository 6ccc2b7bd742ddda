"""The test guests' time limits (guest.Watchdog) follow a guest's own progress: a boot
limit until our script starts, then a stall limit that every new step, byte of output or
placement event restarts, and a cap. Planted work dirs and a given clock: no QEMU."""

from __future__ import annotations

from guest import Watchdog


def test_a_slow_guest_that_keeps_progressing_is_never_stopped(tmp_path):
    dog = Watchdog(tmp_path, boot_s=100, stall_s=50, cap_s=10_000)
    t0 = dog.t0
    assert dog.verdict(t0 + 90) is None                      # still booting, under the limit
    (tmp_path / "uptime").write_text("88.1")
    assert dog.verdict(t0 + 95) is None                      # our script started
    for k in range(1, 40):                                   # 40 steps, 40 s apart: slow,
        (tmp_path / "stacks.log").write_text("--- step s\n" * k)   # but each one begins
        assert dog.verdict(t0 + 95 + 40 * k) is None
    assert dog.verdict(t0 + 95 + 40 * 39 + 49) is None


def test_output_and_placement_events_are_progress_but_stack_samples_are_not(tmp_path):
    dog = Watchdog(tmp_path, boot_s=100, stall_s=50, cap_s=10_000)
    t0 = dog.t0
    (tmp_path / "uptime").write_text("30")
    (tmp_path / "stacks.log").write_text("--- step run\n")
    assert dog.verdict(t0 + 10) is None
    (tmp_path / "0.err").write_text("stage bandwidth done\n")
    assert dog.verdict(t0 + 55) is None                       # output: the clock restarts
    (tmp_path / "witness.log").write_text('{"ev": "buffer"}\n')
    assert dog.verdict(t0 + 100) is None
    # a hung step: the sampler adds the same stack every 60 s, nothing else moves
    (tmp_path / "stacks.log").write_text("--- step run\n--- 60 s\n  File x\n--- 120 s\n")
    why = dog.verdict(t0 + 151)
    assert why and "no progress for 50 s after 1 step(s) begun" in why


def test_a_kernel_that_never_reaches_the_script_is_stopped_at_the_boot_limit(tmp_path):
    dog = Watchdog(tmp_path, boot_s=100, stall_s=50, cap_s=10_000)
    assert dog.verdict(dog.t0 + 99) is None
    assert "did not reach our script within 100 s" in dog.verdict(dog.t0 + 101)


def test_the_cap_holds_whatever_the_progress(tmp_path):
    dog = Watchdog(tmp_path, boot_s=100, stall_s=50, cap_s=200)
    (tmp_path / "uptime").write_text("1")
    for k in range(1, 5):
        (tmp_path / "1.out").write_text("x" * k)
        assert dog.verdict(dog.t0 + 40 * k) is None
    (tmp_path / "1.out").write_text("x" * 9)
    assert "after 200 s in all" in dog.verdict(dog.t0 + 201)
