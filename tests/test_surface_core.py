"""The shared foundations every command's surface stands on (issue 26): the one check of
output files and working folders, the one rule for values, one-line escaped messages, and
replayed files read with a size cap. Each class has several cases, through the command
line (with --json: one envelope, errors[0].kind "bad-input", one line on stderr) and at the
function it is about. Replayed machines are built in tmp_path, never read off this host."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest
from synth_sysfs import machine

from numascope.cli import main
from numascope.command.output import check_output, check_workdir
from numascope.errors import UserError, escape_text
from numascope.options import Option
from numascope.topology.files import MAX_FILE, Tree
from numascope.topology.reader import read_topology

CPU = "sys/devices/system/cpu"
NODE = "sys/devices/system/node"


def _bad(argv: list[str], capsys, says: str, code: int = 2) -> str:
    """`argv` exits `code` with one line containing `says`; with --json, one envelope whose
    first error is bad-input carrying the same line. Returns the line."""
    rc = main(argv)
    cap = capsys.readouterr()
    assert rc == code, (argv, rc, cap.err)
    lines = cap.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("numascope: error: "), cap.err
    assert says in lines[0], (says, lines[0])
    assert "Traceback" not in cap.err + cap.out
    assert "\x1b" not in cap.err
    rc = main(argv + ["--json"])
    cap = capsys.readouterr()
    assert rc == code
    doc = json.loads(cap.out)                       # one document, nothing around it
    assert doc["errors"][0]["kind"] == ("bad-input" if code == 2 else doc["errors"][0]["kind"])
    assert doc["errors"][0]["exit_code"] == code
    assert says in doc["errors"][0]["message"]
    err = cap.err.splitlines()
    assert len(err) == 1 and err[0] == "numascope: error: " + doc["errors"][0]["message"]
    return lines[0]


# -- one way to open every output file --------------------------------------------------------

@pytest.fixture
def to_proc(tmp_path) -> Path:
    link = tmp_path / "to-proc"
    link.symlink_to("/proc")
    return link


def _bad_outputs(tmp_path: Path, to_proc: Path) -> list[tuple[str, str]]:
    (tmp_path / "afile").write_text("x")
    return [
        ("/proc/t.xml", "is on proc"),
        ("/sys/t.xml", "is on sysfs"),
        ("/sys/fs/t.xml", "is on sysfs"),
        (f"{to_proc}/t.xml", "is on proc"),
        (f"{tmp_path}/{'n' * 300}.xml", "the name is too long"),
        ("/" + "d/" * 2100 + "t.xml", "the name is too long"),
        (f"{tmp_path}/no/such/t.xml", "does not exist"),
        (f"{tmp_path}/afile/t.xml", "not a folder"),
        (str(tmp_path), "is a folder"),
        (f"{tmp_path}/t.txt", "must end in .xml"),
        (f"{tmp_path}/a\x00b.xml", "NUL"),
    ]


def test_check_output_turns_every_os_error_into_one_line(tmp_path, to_proc):
    for path, says in _bad_outputs(tmp_path, to_proc):
        with pytest.raises(UserError) as e:
            check_output(path, "--hwloc-xml", (".xml",))
        msg = str(e.value)
        assert msg.startswith("--hwloc-xml ") and says in msg, (path[:60], msg)
        assert "\n" not in msg and "\x00" not in msg and len(msg) < 500, msg


def test_check_output_empty_and_not_given(tmp_path):
    for empty in ("", " ", "\t"):
        with pytest.raises(UserError, match="--plot is empty"):
            check_output(empty, "--plot", (".png",))
    assert check_output(None, "--plot") is None
    assert check_output("-", "--out") == Path("-")
    ok = tmp_path / "fine.png"
    assert check_output(str(ok), "--plot", (".png",)) == ok
    assert not ok.exists() and not list(tmp_path.iterdir()), "the check left a file"


def test_check_output_refuses_devices_and_unwritable(tmp_path):
    with pytest.raises(UserError, match="devtmpfs|not a plain file"):
        check_output("/dev/null", "--out")
    fifo = tmp_path / "pipe.prom"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="not a plain file"):
        check_output(str(fifo), "--out", (".prom",))
    if os.geteuid() != 0:     # root writes everywhere: the mode proves nothing there
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(UserError, match="permission denied"):
            check_output(str(ro / "x.png"), "--plot", (".png",))


@pytest.mark.parametrize("case", range(4))
def test_output_flags_refuse_before_reading_or_measuring(case, tmp_path, to_proc, capsys):
    """Through commands: topo --hwloc-xml, lat --plot, bw --plot (checked before anything
    is read or measured: the machine is a tree with no CPUs, which would fail otherwise)."""
    empty_root = tmp_path / "not-a-machine"
    empty_root.mkdir()
    argv = [["topo", "--sysfs-root", str(empty_root), "--hwloc-xml", "/proc/t.xml"],
            ["topo", "--sysfs-root", str(empty_root), "--hwloc-xml", f"{to_proc}/t.xml"],
            ["lat", "--plot", f"{tmp_path}/{'p' * 300}.png"],
            ["bw", "--plot", "/sys/bw.png"]][case]
    says = ["--hwloc-xml /proc/t.xml: is on proc", "is on proc", "the name is too long",
            "--plot /sys/bw.png: is on sysfs"][case]
    _bad(argv, capsys, says)


# -- one way to check every working folder -----------------------------------------------------

def test_check_workdir(tmp_path, to_proc):
    (tmp_path / "afile").write_text("x")
    bad = [("/proc", "is on proc"), ("/sys", "is on sysfs"), ("/sys/fs/cgroup", "sysfs"),
           ("/proc/self", "is on proc"), (str(to_proc), "is on proc"),
           (f"{tmp_path}/{'d' * 300}", "the name is too long"),
           (f"{tmp_path}/missing", "no such folder"), (f"{tmp_path}/afile", "not a folder"),
           (f"{tmp_path}/afile/below", "not a folder"), ("", "--dir is empty"),
           ("  ", "--dir is empty"), ("/dev", "devtmpfs")]
    for path, says in bad:
        with pytest.raises(UserError) as e:
            check_workdir(path, "--dir")
        msg = str(e.value)
        assert msg.startswith("--dir") and says in msg and "\n" not in msg, (path, msg)
    assert check_workdir(str(tmp_path), "--dir") == tmp_path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "to-proc"]


def test_check_workdir_escapes_the_path(tmp_path):
    with pytest.raises(UserError) as e:
        check_workdir(f"{tmp_path}/a\x1b[31m\nb", "--shared-dir")
    msg = str(e.value)
    assert "\\x1b[31m\\nb" in msg and "\x1b" not in msg and "\n" not in msg


# -- one rule for values -------------------------------------------------------------------------

def test_size_errors_name_the_flag():
    size = Option("--size", "working set", kind="size", low=64)
    for text, says in (("1P", "--size: bad size '1P'"), ("lots", "--size: bad size 'lots'"),
                       ("0", "--size: size '0' must be larger than zero"),
                       ("-1", "--size: bad size '-1'"), ("", "--size is empty")):
        with pytest.raises(UserError) as e:
            size.convert(text)
        assert says in str(e.value), (text, str(e.value))
    with pytest.raises(UserError, match="^--bw-size: bad size"):
        size.convert("2Q", "--bw-size")         # the spelling the user typed
    assert size.convert("4K") == 4096


def test_size_flag_through_the_command_line(capsys):
    _bad(["lat", "--size", "1P"], capsys, "--size: bad size '1P'")
    _bad(["lat", "--size", "0"], capsys, "--size: size '0' must be larger than zero")


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "NaN"])
def test_floats_are_finite(text):
    o = Option("--ratio", "a ratio", kind="float")
    with pytest.raises(UserError, match="^--ratio .*finite"):
        o.convert(text)
    with pytest.raises(UserError, match="finite"):
        o.convert(float(text))                  # as argparse hands it over
    assert o.convert("0.5") == 0.5


@pytest.mark.parametrize("kind", ["str", "int", "float", "size", "ints", "choice"])
def test_empty_is_an_error_for_every_kind(kind):
    o = Option("--x", "x", kind=kind, choices=("a", "b") if kind == "choice" else ())
    for text in ("", "   "):
        with pytest.raises(UserError, match="--x is empty"):
            o.convert(text)


# -- messages: whole, one line, control characters visible ----------------------------------

def test_escape_text():
    assert escape_text("a\x1b[31mb\nc\td\re") == "a\\x1b[31mb\\nc\\td\\re"
    assert escape_text("\u202eevil\u2028x\x85\x00") == "\\u202eevil\\u2028x\\x85\\x00"
    assert escape_text(os.fsdecode(b"caf\xff")) == "caf\\xff"
    assert escape_text("C:\\path é ✓") == "C:\\path é ✓"
    long = escape_text("x" * 1000, 100)
    assert len(long) < 140 and "(1000 characters)" in long
    assert len(escape_text("line\n" * 50).splitlines()) == 1


def test_a_message_with_a_newline_and_escape_is_whole_on_one_line(tmp_path, capsys):
    root = f"{tmp_path}/dump\x1b[2J\nsecond line"
    line = _bad(["topo", "--sysfs-root", root], capsys, "no such file or directory")
    assert "dump\\x1b[2J\\nsecond line" in line


def test_an_output_path_with_control_characters(tmp_path, capsys):
    plot = f"{tmp_path}/no\x1bdir\n/x.png"
    line = _bad(["lat", "--plot", plot], capsys, "does not exist")
    assert "no\\x1bdir\\n/x.png" in line


def test_a_long_message_is_not_cut(monkeypatch, capsys):
    from numascope.cli import topo
    text = "first part\nsecond part *** in database main ***\nthird part"

    def boom(args):
        raise UserError(text)
    monkeypatch.setattr(topo, "main", boom)
    line = _bad(["topo"], capsys, "third part")
    assert line == "numascope: error: " + text.replace("\n", "\\n")


def test_internal_error_is_one_escaped_line(monkeypatch, capsys):
    from numascope.cli import topo
    monkeypatch.delenv("NUMASCOPE_DEBUG", raising=False)

    def boom(args):
        raise RuntimeError("bad\x1b[0m\nthing")
    monkeypatch.setattr(topo, "main", boom)
    assert main(["topo"]) == 70      # a crash: never 1, which a health check reads as "out"
    cap = capsys.readouterr()
    assert len(cap.err.splitlines()) == 1 and "\x1b" not in cap.err
    assert "RuntimeError: bad\\x1b[0m\\nthing" in cap.err
    assert main(["topo", "--json"]) == 70
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["errors"][0]["kind"] == "internal" and doc["errors"][0]["exit_code"] == 70
    assert doc["errors"][0]["message"] == "RuntimeError: bad\\x1b[0m\\nthing"


def test_argparse_errors_are_escaped(capsys):
    _bad(["lat", "--stride", "1\x1b2"], capsys, "1\\x1b2")


# -- replayed files: a size cap, and malformed facts are errors ----------------------------------

@pytest.fixture
def root(tmp_path) -> Path:
    return machine(tmp_path / "m", sockets=1, l3_per_socket=1, cores_per_l3=4, smt=1)


def _write(root: Path, rel: str, data: bytes | str) -> None:
    p = root / rel
    p.write_bytes(data if isinstance(data, bytes) else data.encode())


MALFORMED = [
    (f"{CPU}/online", "banana", "online: not a valid CPU/node list"),
    (f"{CPU}/online", "", "online: empty"),
    (f"{CPU}/online", b"\x00" * 4096, "online: empty"),
    (f"{CPU}/online", b"0-1\x003", "online: not a valid CPU/node list"),
    (f"{CPU}/online", "0-3,,", "online: not a valid CPU/node list"),
    (f"{CPU}/cpu1/online", "banana", "cpu1/online: expected 0 or 1"),
    (f"{CPU}/cpu2/online", "", "cpu2/online: expected 0 or 1"),
    (f"{CPU}/cpu1/topology/physical_package_id", "zero", "expected a number"),
    (f"{NODE}/node0/distance", "10 banana", "malformed row"),
    (f"{NODE}/node0/cpulist", "0-x", "not a valid CPU/node list"),
]


@pytest.mark.parametrize("rel,content,says", MALFORMED, ids=[f"{r[0][-22:]}={r[1]!r:.12}"
                                                             for r in MALFORMED])
def test_malformed_facts_are_errors_naming_the_file(rel, content, says, root, capsys):
    _write(root, rel, content)
    with pytest.raises(UserError, match=says):
        read_topology(root)
    _bad(["topo", "--sysfs-root", str(root)], capsys, f"{root}:{rel.rsplit('/', 2)[0]}")


def test_trailing_nul_and_newline_still_read(root):
    _write(root, f"{CPU}/online", b"0-3\n\x00")
    _write(root, f"{CPU}/cpu1/online", b"1\n\x00\x00")
    topo = read_topology(root, infer=False, devices=False)
    assert all(c.online for c in topo.cpus)


def test_a_file_over_the_cap_is_refused_unread(root, capsys, monkeypatch):
    _write(root, f"{CPU}/online", b"0-3" + b" " * MAX_FILE)
    sizes = []
    real_fdopen = os.fdopen

    class Spy:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def read(self, n=-1):
            sizes.append(n)
            return self.f.read(n)

    monkeypatch.setattr(os, "fdopen", lambda *a, **k: Spy(real_fdopen(*a, **k)))
    with pytest.raises(UserError, match=r"online: larger than 1 MiB"):
        Tree(root).read(f"{CPU}/online")
    assert sizes and all(0 < n <= MAX_FILE + 1 for n in sizes), sizes
    monkeypatch.undo()
    _bad(["topo", "--sysfs-root", str(root)], capsys, "online: larger than 1 MiB")


def test_a_pipe_in_a_dump_is_refused_not_waited_on(root):
    (root / CPU / "online").unlink()
    os.mkfifo(root / CPU / "online")
    with pytest.raises(UserError, match="online: not a plain file"):
        read_topology(root)


def test_a_large_cpuinfo_is_read_for_its_first_block(root):
    block = (root / "proc/cpuinfo").read_text()
    _write(root, "proc/cpuinfo", (block + "\n") * (2 * MAX_FILE // len(block)))
    topo = read_topology(root, infer=False, devices=False)
    assert topo.cpu_vendor == "AuthenticAMD"


def _tar(root: Path, dest: Path, extra: dict[str, int]) -> Path:
    """A .tar.gz of `root`, with members of the given sizes (NUL bytes) added or replaced."""
    with tarfile.open(dest, "w:gz") as tar:
        for p in sorted(root.rglob("*")):
            rel = p.relative_to(root).as_posix()
            if rel in extra:
                continue
            tar.add(p, arcname=rel, recursive=False)
        for rel, size in extra.items():
            info = tarfile.TarInfo(rel)
            info.size = size
            tar.addfile(info, io.BytesIO(b"\x00" * size))
    return dest


def test_a_tarball_member_over_the_cap_is_refused_by_its_header(root, tmp_path, capsys):
    dump = _tar(root, tmp_path / "dump.tar.gz", {f"{CPU}/online": 3 * MAX_FILE})
    with pytest.raises(UserError, match="online: .*larger than 1 MiB"):
        read_topology(dump)
    _bad(["topo", "--sysfs-root", str(dump)], capsys, "larger than 1 MiB")


def test_a_tarball_of_nul_lists_is_not_a_known_fact(root, tmp_path, capsys):
    dump = _tar(root, tmp_path / "nul.tar.gz", {f"{CPU}/online": 1000})
    _bad(["topo", "--sysfs-root", str(dump)], capsys, "online: empty")


def test_a_tarball_with_a_large_cpuinfo_still_reads(root, tmp_path):
    block = (root / "proc/cpuinfo").read_text()
    _write(root, "proc/cpuinfo", (block + "\n") * (2 * MAX_FILE // len(block)))
    dump = _tar(root, tmp_path / "big-cpuinfo.tar.gz", {})
    topo = read_topology(dump, infer=False, devices=False)
    assert topo.cpu_vendor == "AuthenticAMD" and len(topo.cpus) == 4


def test_a_sysfs_root_that_cannot_be_looked_at(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    for root, says in ((f"{tmp_path}/{'r' * 300}", "file name too long"),
                       (f"{tmp_path}/afile/below", "not a directory"),
                       (f"{tmp_path}/nothing", "no such file or directory"),
                       (f"{tmp_path}/afile", "not a directory or a tar archive")):
        with pytest.raises(UserError, match=says):
            read_topology(root)
    _bad(["topo", "--sysfs-root", f"{tmp_path}/{'r' * 300}"], capsys, "file name too long")


def test_a_warning_is_one_escaped_line(capsys):
    from numascope.console import warn
    warn("file a\x1b[31m\nb [bold]not markup[/bold]")
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "\x1b[31m" not in err
    assert "a\\x1b[31m\\nb [bold]not markup[/bold]" in err
