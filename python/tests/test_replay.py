"""Time travel (Trace.state, Trace.history over frames_replay.h) against the frames
command's `state --json` and `history --json` on a program recorded here."""
import os
import shutil
import subprocess

import pytest

import frames
from conftest import BIN, json_lines, run

# a loop that stores rax and ax into a 16-byte global and writes bl (an alias of rbx)
PROGRAM = """
        .data
buf:    .quad 0, 0
        .text
        .globl _start
_start:
        mov $0x0102030405060708, %rax
        mov $3, %ecx
1:      lea buf(%rip), %rdi
        mov %rax, (%rdi)
        add %rcx, %rax
        mov %ax, 8(%rdi)
        mov %al, %bl
        push %rax
        pop %rdx
        dec %ecx
        jnz 1b
        mov $60, %eax
        xor %edi, %edi
        syscall
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """(trace path, address of buf): the program above recorded by `frames record`."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to build the program to record")
    d = tmp_path_factory.mktemp("replay")
    src, prog, trace = d / "p.S", d / "p", d / "p.frames"
    src.write_text(PROGRAM)
    subprocess.run(["cc", "-nostdlib", "-static", "-o", str(prog), str(src)], check=True,
                   timeout=60)
    p = subprocess.run([BIN, "record", "-f", "-o", str(trace), "--", str(prog)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0 or not trace.exists():
        pytest.skip("the recorder does not run here: %s" % p.stderr.decode(errors="replace")
                    .strip().splitlines()[-1:])
    syms = subprocess.run(["nm", str(prog)], stdout=subprocess.PIPE, check=True).stdout.decode()
    buf = next(int(l.split()[0], 16) for l in syms.splitlines() if l.endswith(" buf"))
    return str(trace), buf


def expected_state(trace, i, ranges, index):
    """frames state --json at i: (index, thread, pc, {reg: int}, [hex with ??])."""
    args = ["state", trace, "--at", i, "--json", "--index", index]
    for a, n in ranges:
        args += ["--mem", "0x%x:%d" % (a, n)]
    (j,) = json_lines(*args)
    pc = int(j["pc"], 16) if "pc" in j else None
    return (j["index"], j["thread"], pc, {k: int(v, 16) for k, v in j["registers"].items()},
            [m["bytes"] for m in j.get("memory", [])])


def test_state_equals_the_command_at_every_instruction(recorded, tmp_path):
    trace, buf = recorded
    index = str(tmp_path / "p.fridx")
    with frames.open(trace) as t:
        n = sum(1 for f in t if f.kind == "std")
        first = t.state(0, index=index)
        rsp = t.state(n, index=index)["rsp"]   # known once push ran
        ranges = [(buf, 16), (rsp - 16, 24)]
        seen_partly_known = False
        for i in range(n + 1):
            s = t.state(i, index=index)
            mem = [s.memory(a, k) for a, k in ranges]
            got = (s.index, s.thread, s.pc, dict(s), [m.hex() for m in mem])
            assert got == expected_state(trace, i, ranges, index), i
            for m in mem:
                assert m.data == bytes(b if k else 0 for b, k in zip(m.data, m.known))
                seen_partly_known |= 0 < sum(m.known) < len(m.known)
        assert seen_partly_known   # the test saw known and unknown bytes side by side
        # the recorder writes the whole state at a thread's first instruction
        assert first.pc is not None and "rax" in first and "r15" in first
        assert t.state(n).pc is None and t.state(-1).index == n - 1
        with pytest.raises(IndexError):
            t.state(n + 1)


def expected_history(trace, what, start, stop, index):
    args = ["history", trace, "--json", "--index", index, "--from", start] + what
    if stop is not None:
        args += ["--to", stop]
    return [(j["index"], int(j["pc"], 16), j["thread"], j["access"],
             int(j["address"], 16) if "address" in j else None, j.get("size"),
             j.get("register"), None if j["value"] is None else int(j["value"], 16))
            for j in json_lines(*args)]


@pytest.mark.parametrize("start,stop", [(0, None), (5, 20), (9, 10), (30, None)])
def test_history_equals_the_command(recorded, tmp_path, start, stop):
    trace, buf = recorded
    index = str(tmp_path / "p.fridx")
    with frames.open(trace) as t:
        for kw, what in [(dict(mem=(buf, 16)), ["--mem", "0x%x:16" % buf]),
                         (dict(mem=(buf + 8, 1)), ["--mem", "0x%x:1" % (buf + 8)]),
                         (dict(reg="rbx"), ["--reg", "rbx"]),
                         (dict(reg="eax"), ["--reg", "eax"]),
                         (dict(reg="rsp"), ["--reg", "rsp"])]:
            got = t.history(start=start, stop=stop, index=index, **kw)
            want = expected_history(trace, what, start, stop, index)
            assert [(a.index, a.pc, a.thread, a.access, a.address,
                     a.size if a.address is not None else None, a.register, a.value)
                    for a in got] == want, kw
            if start == 0 and stop is None:
                assert want   # every query finds something over the whole trace


def test_index_beside_the_trace_by_default(recorded, tmp_path):
    trace = str(tmp_path / "copy.frames")
    shutil.copyfile(recorded[0], trace)
    with frames.open(trace) as t:
        h = t.history(reg="bl")
        assert h[0].index == 0 and h[0].register == "rbx"   # the whole state read first
        assert any(a.register == "bl" for a in h)
    assert os.path.exists(trace + ".fridx")
    with frames.open(trace) as t:
        with pytest.raises(ValueError):
            t.history()
        with pytest.raises(ValueError):
            t.history(mem=(0, 1), reg="rax")
        with pytest.raises(frames.FramesError):
            t.history(reg="no_such_register")
    t.close()
    with pytest.raises(ValueError):
        t.state(0)


@pytest.mark.skipif(not frames.HAVE_ZSTD, reason="the module is built without libzstd")
def test_compressed_trace_answers_as_the_plain_one(recorded, tmp_path):
    trace, buf = recorded
    zst = str(tmp_path / "p.frames.zst")
    run("compress", trace, "-o", zst)
    with frames.open(trace) as t, frames.open(zst) as z:
        n = len(t.instructions())
        for i in range(0, n + 1, 3):
            a, b = t.state(i, index=str(tmp_path / "a.fridx")), z.state(i)
            assert (a.thread, a.pc, dict(a), a.memory(buf, 16)) == \
                (b.thread, b.pc, dict(b), b.memory(buf, 16))
        assert z.history(mem=(buf, 16)) == t.history(mem=(buf, 16), index=str(tmp_path / "a.fridx"))
    assert os.path.exists(zst + ".fridx")
