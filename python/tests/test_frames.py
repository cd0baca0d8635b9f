"""The frames package against the frames command on every shared vector, plus writing,
damaged input, queries, names and pandas."""
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import frames
from conftest import BIN, UNREADABLE, VECTORS, json_lines, run


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="frames-py-")
    yield d
    shutil.rmtree(d)


def dumped(path):
    """(meta or None, [frame objects of `frames dump --json`])."""
    meta, frames_ = None, []
    for obj in json_lines("dump", "--json", path):
        if "meta" in obj:
            meta = obj["meta"]
        else:
            frames_.append(obj)
    return meta, frames_


# ---- our frame objects in the shape of `frames dump --json` (docs/format.md) --------

def op_json(op, with_usage):
    spec = {}
    if op.address is not None:
        spec["mem_operand"] = {"address": op.address}
    if op.name is not None:
        spec["reg_operand"] = {"name": op.name}
    j = {"operand_info_specific": spec, "bit_length": op.bit_length}
    if with_usage:
        j["operand_usage"] = {"read": op.read, "written": op.written, "index": op.index,
                              "base": op.base}
    if op.taint is not None:
        t = {}
        if op.taint.no_taint is not None:
            t["no_taint"] = op.taint.no_taint
        if op.taint.id is not None:
            t["taint_id"] = op.taint.id
        if op.taint.multiple is not None:
            t["taint_multiple"] = op.taint.multiple
        j["taint_info"] = t
    j["value"] = op.value.hex()
    return j


def frame_json(f):
    if f.kind == "std":
        j = {"address": f.address, "thread_id": f.thread_id, "rawbytes": f.rawbytes.hex(),
             "operand_pre_list": [op_json(o, True) for o in f.pre]}
        if f.post is not None:
            j["operand_post_list"] = [op_json(o, True) for o in f.post]
        if f.mode is not None:
            j["mode"] = f.mode
        return {"std_frame": j}
    if f.kind == "syscall":
        return {"syscall_frame": {"address": f.address, "thread_id": f.thread_id,
                                  "number": f.number, "argument_list": f.args}}
    if f.kind == "exception":
        j = {"exception_number": f.number}
        for k in ("thread_id", "from_addr", "to_addr"):
            if getattr(f, k) is not None:
                j[k] = getattr(f, k)
        return {"exception_frame": j}
    if f.kind == "taint_intro":
        out = []
        for x in f.intros:
            j = {"addr": x.addr, "taint_id": x.taint_id}
            if x.value is not None:
                j["value"] = x.value.hex()
            if x.source_name is not None:
                j["source_name"] = x.source_name
            if x.offset is not None:
                j["offset"] = x.offset
            out.append(j)
        return {"taint_intro_frame": {"taint_intro_list": out}}
    if f.kind == "modload":
        return {"modload_frame": {"module_name": f.module_name, "low_address": f.low_address,
                                  "high_address": f.high_address}}
    if f.kind == "key":
        lists = []
        for l in f.lists:
            tag = {}
            if l.thread_id is not None:
                tag["thread_id"] = l.thread_id
            if l.no_thread_id is not None:
                tag["no_thread_id"] = l.no_thread_id
            lists.append({"value_source_tag": tag,
                          "value_list": [op_json(o, False) for o in l.values]})
        return {"key_frame": {"tagged_value_lists": lists}}
    raise AssertionError("unexpected frame %r" % (f,))


# ---- reading: len, iteration, random access, columns -----------------------------------

def test_len_iteration_random_access(vector):
    _, expected = dumped(vector)
    with frames.open(vector) as t:
        assert len(t) == len(expected)
        got = list(t)
        assert [f.index for f in got] == list(range(len(expected)))
        assert [frame_json(f) for f in got] == [e["frame"] for e in expected]
        rnd = random.Random(len(expected))
        picks = {0, len(expected) - 1} | {rnd.randrange(len(expected)) for _ in range(50)} \
            if expected else set()
        for i in sorted(picks, reverse=True):   # backwards: every access is a seek
            assert frame_json(t[i]) == expected[i]["frame"], i
        if expected:
            assert t[-1] == got[-1]
        with pytest.raises(IndexError):
            t[len(expected)]


@pytest.mark.parametrize("path", UNREADABLE, ids=os.path.basename)
def test_unreadable_vectors_raise_as_the_command_does(path):
    p = subprocess.run([BIN, "info", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with pytest.raises(frames.FramesError) as e:
        frames.open(path)
    assert e.value.message in p.stderr.decode()


def test_meta(vector):
    meta, _ = dumped(vector)
    with frames.open(vector) as t:
        if meta is None:
            assert t.meta is None
            return
        assert t.meta["tracer_name"] == meta["tracer"]["name"]
        assert t.meta["tracer_args"] == meta["tracer"]["args"]
        assert t.meta["target_path"] == meta["target"]["path"]
        assert t.meta["target_md5sum"].hex() == meta["target"]["md5sum"]
        assert t.meta["fstats_size"] == meta["fstats"]["size"]
        assert t.meta["time"] == meta["time"]


def test_pc_column(vector):
    pcs = [int(l, 16) for l in run("dump", "--pc", vector).decode().split()]
    _, expected = dumped(vector)
    with frames.open(vector) as t:
        ins = t.instructions()
        assert ins.pc.dtype == np.uint64
        assert ins.pc.tolist() == pcs
        std = [e for e in expected if "std_frame" in e["frame"]]
        assert ins.index.tolist() == [e["index"] for e in std]
        assert ins.tid.tolist() == [e["frame"]["std_frame"]["thread_id"] for e in std]
        assert ins.size.tolist() == [len(e["frame"]["std_frame"]["rawbytes"]) // 2 for e in std]
        full = t.instructions(check=True)   # every frame decoded in full: the same rows
        assert all(full[k].tolist() == ins[k].tolist() for k in ins.keys())
        n = len(t)
        if n > 3:   # a range is the same rows as filtering the whole
            part = t.instructions(1, n - 1)
            keep = (ins.index >= 1) & (ins.index < n - 1)
            assert part.pc.tolist() == ins.pc[keep].tolist()


def test_operands_match_jsonl(vector):
    rows = json_lines("dump", "--jsonl", vector)
    with frames.open(vector) as t:
        c = t.operands()
    assert len(c) == len(rows)
    names = c.names
    off, data = c.value_off, c.value_data.tobytes()
    for i, r in enumerate(rows):
        got = {
            "frame": int(c.frame[i]),
            "pc": int(c.pc[i]) if c.has_pc[i] else None,
            "tid": int(c.tid[i]) if c.has_tid[i] else None,
            "list": frames.OPERAND_LISTS[c.list[i]],
            "kind": frames.OPERAND_KINDS[c.kind[i]],
            "name": names[c.name_id[i]] if c.name_id[i] >= 0 else None,
            "address": int(c.address[i]) if c.kind[i] == 2 else None,
            "bits": int(c.bits[i]),
            "read": bool(c.read[i]), "written": bool(c.written[i]),
            "index": bool(c.index[i]), "base": bool(c.base[i]),
            "taint_id": int(c.taint_id[i]) if c.has_taint_id[i] else None,
            "value": data[off[i]:off[i + 1]].hex(),
            "value_uint": int(c.value_uint[i]) if 1 <= off[i + 1] - off[i] <= 8 else None,
        }
        if r["kind"] == "mem" and r["name"] is not None:   # both set (malformed): jsonl says mem
            got["name"] = r["name"]
        assert got == r, i


def test_syscalls_column(vector):
    _, expected = dumped(vector)
    sc = [(e["index"], e["frame"]["syscall_frame"]) for e in expected
          if "syscall_frame" in e["frame"]]
    with frames.open(vector) as t:
        c = t.syscalls()
    assert c.frame.tolist() == [i for i, _ in sc]
    assert c.number.tolist() == [s["number"] for _, s in sc]
    assert c.pc.tolist() == [s["address"] for _, s in sc]
    for k, (_, s) in enumerate(sc):
        assert c.args[c.args_off[k]:c.args_off[k + 1]].tolist() == s["argument_list"]


# ---- writing ------------------------------------------------------------------------------

def copy_with_python(src, dst):
    with frames.open(src) as t, frames.create(dst, like=t) as w:
        for f in t:
            w.add(f)


def test_write_is_byte_identical_to_cat(vector, tmp):
    ours, theirs = os.path.join(tmp, "py.frames"), os.path.join(tmp, "cat.frames")
    copy_with_python(vector, ours)
    run("cat", vector, theirs)
    with open(ours, "rb") as a, open(theirs, "rb") as b:
        assert a.read() == b.read()


@pytest.mark.skipif(not frames.HAVE_ZSTD, reason="module built without libzstd")
def test_write_zst_is_byte_identical_to_cat(tmp):
    src = os.path.join(os.path.dirname(VECTORS[0]), "r10_default_m_n10001.frames")
    ours, theirs = os.path.join(tmp, "py.frames.zst"), os.path.join(tmp, "cat.frames.zst")
    copy_with_python(src, ours)
    run("cat", src, theirs)
    with open(ours, "rb") as a, open(theirs, "rb") as b:
        assert a.read() == b.read()
    plain = subprocess.run(["zstd", "-dc", ours], stdout=subprocess.PIPE, check=True).stdout
    with open(src, "rb") as f:
        assert plain == f.read()
    with frames.open(ours) as z, frames.open(src) as p:   # and reading .zst back
        assert len(z) == len(p) and z[5000] == p[5000]
        assert z.instructions().pc.tolist() == p.instructions().pc.tolist()


def sample_frames():
    R = frames.Operand
    return [
        frames.ModloadFrame("/bin/true", 0x400000, 0x40ffff),
        frames.StdFrame(0x401000, 1, b"\x48\x89\xd8",
                        pre=[R(name="RBX", value=(7).to_bytes(8, "little"), read=True)],
                        post=[R(name="RAX", value=(7).to_bytes(8, "little"), written=True)]),
        frames.StdFrame(0x401003, 1, b"\x8b\x07",
                        pre=[R(address=0x601000, value=b"\x01\x02\x03\x04", read=True,
                               taint=frames.Taint(id=3))],
                        mode="x86:64"),
        frames.SyscallFrame(0x401005, 1, 60, [0, -1]),
        frames.ExceptionFrame(11, thread_id=1, from_addr=0x401007),
        frames.TaintIntroFrame([frames.TaintIntro(0x601000, 3, offset=0, value=b"A",
                                                  source_name="stdin")]),
        frames.KeyFrame([frames.TaggedValues(None, [R(name="RIP", value=b"\0" * 8)]),
                         frames.TaggedValues(1, [R(address=0x10, value=b"\x05")])]),
    ]


def as_written(frames_):
    """What the writer writes for sample_frames: an operand_info without taint gets
    no_taint: true (docs/python.md, frames.h); value_info keeps none."""
    for f in frames_:
        if f.kind == "std":
            for op in f.pre + (f.post or []):
                if op.taint is None:
                    op.taint = frames.Taint(no_taint=True)
    return frames_


def test_written_trace_reads_back_as_the_command_sees_it(tmp):
    path = os.path.join(tmp, "made.frames")
    meta = {"tracer_name": "pytest", "tracer_args": ["a", "b"], "target_path": "/bin/true",
            "target_md5sum": bytes(range(16)), "time": 1700000000.5, "user": "u", "host": "h"}
    with frames.create(path, arch="i386", machine=64, frames_per_toc=3, meta=meta) as w:
        w.extend(sample_frames())
        assert len(w) == len(sample_frames())
    _, expected = dumped(path)
    assert [e["frame"] for e in expected] == [frame_json(f) for f in as_written(sample_frames())]
    assert run("dump", path).decode().startswith("# version 3, arch 9 (i386), machine 64,")
    with frames.open(path) as t:
        assert t.arch == "i386" and t.machine == 64
        assert t.meta["tracer_args"] == ["a", "b"] and t.meta["time"] == 1700000000.5
        got = list(t)
        for f in got:
            f.index = None
        assert got == as_written(sample_frames())


def test_writer_refuses_what_bap_rejects(tmp):
    path = os.path.join(tmp, "bad.frames")
    with frames.create(path) as w:
        with pytest.raises(frames.FramesError) as e:
            w.add(frames.UnknownFrame(field=0))   # an empty frame: piqirun rejects it
        assert e.value.message and e.value.code < 0


# ---- damaged input ----------------------------------------------------------------------------

def test_decode_error_carries_message_offset_and_frame(tmp):
    src = os.path.join(os.path.dirname(VECTORS[0]), "r02_all_frame_types_x86_64.frames")
    _, expected = dumped(src)
    k = 3
    data = bytearray(open(src, "rb").read())
    at = expected[k]["offset"]
    data[at + 8] = 0x07   # the payload's first tag: field 0, wire type 7 (no such thing)
    bad = os.path.join(tmp, "bad.frames")
    open(bad, "wb").write(bytes(data))
    with frames.open(bad) as t:
        assert len(t) == len(expected)   # the container is intact
        assert t[k - 1].index == k - 1
        with pytest.raises(frames.FramesError) as e:
            list(t)
        assert e.value.frame == k
        assert e.value.offset is not None and at <= e.value.offset < at + 8 + expected[k]["size"]
        assert e.value.reason == "malformed protobuf message"
        assert "frame %d" % k in str(e.value) or str(k) in str(e.value)
        with pytest.raises(frames.FramesError) as e2:
            t[k]
        assert e2.value.frame == k
        with pytest.raises(frames.FramesError):
            t.instructions()
    cli = subprocess.run([BIN, "dump", bad], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert cli.returncode != 0   # the command agrees that the trace is damaged


def test_damage_inside_an_operand_list(tmp):
    """instructions() reads a std frame's head only (frames_peek_std); check=True and
    iteration decode the operands and report the damage."""
    src = os.path.join(os.path.dirname(VECTORS[0]), "r02_all_frame_types_x86_64.frames")
    _, expected = dumped(src)
    data = bytearray(open(src, "rb").read())
    at = expected[0]["offset"] + 8   # frame 0: 0a L 08 addr 10 tid 1a 04 rawbytes 22 L 0a L ...
    payload = bytes(data[at:at + expected[0]["size"]])
    lists = payload.index(b"\x22", 2 + 4 + 2 + 2 + 4)
    data[at + lists + 3] = 0x07   # first operand's first tag: field 0, wire type 7
    bad = os.path.join(tmp, "bad.frames")
    open(bad, "wb").write(bytes(data))
    with frames.open(bad) as t:
        assert t.instructions().pc.tolist()[0] == expected[0]["frame"]["std_frame"]["address"]
        with pytest.raises(frames.FramesError) as e:
            t.instructions(check=True)
        assert e.value.frame == 0
        with pytest.raises(frames.FramesError):
            t[0]


def test_open_errors(tmp):
    with pytest.raises(frames.FramesError) as e:
        frames.open(os.path.join(tmp, "missing.frames"))
    assert "missing.frames" in e.value.message
    junk = os.path.join(tmp, "junk.frames")
    open(junk, "wb").write(b"not a trace at all, just some text" * 3)
    with pytest.raises(frames.FramesError) as e:
        frames.open(junk)
    assert e.value.code < 0


def test_truncated_copy_keeps_complete_frames(tmp):
    src = os.path.join(os.path.dirname(VECTORS[0]), "r10_default_m_n10001.frames")
    _, expected = dumped(src)
    cut = expected[1234]["offset"] + 5   # inside frame 1234's size word
    path = os.path.join(tmp, "cut.frames")
    open(path, "wb").write(open(src, "rb").read()[:cut])
    with frames.open(path) as t:
        assert len(t) == 1234
        assert t.info["truncated"]
        assert t.instructions().pc.tolist() == [int(l, 16) for l in
                                                run("dump", "--pc", path).decode().split()]


DAMAGE_SCRIPT = r"""
import sys, frames
for path in sys.argv[1:]:
    try:
        t = frames.open(path)
    except frames.FramesError:
        continue
    with t:
        for step in (lambda: len(t), lambda: list(t), lambda: t.instructions(),
                     lambda: t.operands(), lambda: t.syscalls(), lambda: t[len(t) // 2],
                     lambda: t[-1], lambda: t.info):
            try:
                step()
            except (frames.FramesError, IndexError):
                pass
print("survived", len(sys.argv) - 1)
"""


def test_damaged_copies_raise_never_crash(tmp):
    """Truncated and corrupted copies of every vector; in a child process so that a crash
    is reported as one (signal) rather than taking pytest down."""
    rnd = random.Random(25)
    paths = []
    for v in VECTORS:
        data = open(v, "rb").read()
        base = os.path.join(tmp, os.path.basename(v))
        if not data:
            continue
        for k, cut in enumerate(sorted({0, 7, 47, 48, 56, len(data) // 2, len(data) - 1,
                                        rnd.randrange(len(data))})):
            paths.append(base + ".cut%d" % k)
            open(paths[-1], "wb").write(data[:cut])
        for k in range(6):
            bad = bytearray(data)
            for _ in range(1 + k):
                bad[rnd.randrange(len(bad))] = rnd.randrange(256)
            paths.append(base + ".flip%d" % k)
            open(paths[-1], "wb").write(bytes(bad))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, "-c", DAMAGE_SCRIPT] + paths, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=120, cwd=tmp)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    assert p.stdout.decode().split() == ["survived", str(len(paths))]


# ---- query and names -----------------------------------------------------------------------------

@pytest.mark.parametrize("where,types", [
    ("(> (v/value a) 0)", "reg*"),
    ("(and (v/read a) (= (v/bits a) 32))", "*"),
    ("", "mem*"),
])
def test_query_matches_the_command(vector, where, types):
    args = ["query", vector, "--var", "a:" + types, "--json", "--no-index", "--threads", "1",
            "--no-symbols"]
    if where:
        args += ["--where", where]
    expected = json_lines(*args)
    with frames.open(vector) as t:
        got = t.query(where, vars={"a": types})
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        b, eb = g.vars["a"], e["bindings"][0]
        assert (g.frame, g.pc, g.tid) == (e["counter"], e["pc"], e["tid"])
        assert (b.name, b.type, b.value, b.bits, b.post, b.bytes.hex()) == \
            (eb.get("name"), eb["type"], eb.get("value"), eb["bits"], eb["post"], eb["bytes"])


def test_query_errors_raise():
    with frames.open(VECTORS[0]) as t:
        with pytest.raises(frames.FramesError) as e:
            t.query("(> (v/value a) 0", vars={"a": "*"})
        assert e.value.reason == "query syntax error"
        with pytest.raises(frames.FramesError):
            t.query("(> (v/value b) 0)", vars={"a": "*"})


def test_symbolize_matches_dump_symbols(vector):
    """symbolize names a pc from every module of the trace; dump --symbols from the modules
    loaded before it: the same when every modload frame comes before the instructions."""
    _, expected = dumped(vector)
    kinds = [next(iter(e["frame"])) for e in expected]
    if "modload_frame" in kinds and "std_frame" in kinds[:len(kinds) - kinds[::-1].index("modload_frame")]:
        pytest.skip("a module is loaded after an instruction: dump names that pc without it")
    lines = run("dump", "--pc", "--symbols", vector).decode().splitlines()
    with frames.open(vector) as t:
        pcs = t.instructions().pc
        names = t.symbolize(pcs)
    assert len(lines) == len(names)
    for line, pc, name in zip(lines, pcs, names):
        assert line == ("%016x %s" % (pc, name) if name else "%016x" % pc)


# ---- pandas ----------------------------------------------------------------------------------------

def skewed_trace(path):
    """pcs with distinct counts (and a tie, which stat breaks by the lower pc)."""
    rnd = random.Random(7)
    pcs = []
    for k in range(40):
        pcs += [0x1000 + 4 * k] * (k * 3 + 1)
    pcs += [0x9000] * 118   # ties with 0x1000 + 4 * 39 (118 times)
    rnd.shuffle(pcs)
    with frames.create(path, arch="i386", machine=64) as w:
        for pc in pcs:
            w.add(frames.StdFrame(pc, 1 + pc % 3, b"\x90"))


def test_pandas_groupby_gives_stat_hottest(tmp):
    pd = pytest.importorskip("pandas", reason="python3-pandas is not installed")
    path = os.path.join(tmp, "hot.frames")
    skewed_trace(path)
    stat = json_lines("stat", "--json", "--top", "15", path)[0]
    with frames.open(path) as t:
        df = t.instructions().to_pandas()
    counts = df.groupby("pc").size().reset_index(name="count")
    top = counts.sort_values(["count", "pc"], ascending=[False, True]).head(15)
    assert [(int(p), int(c)) for p, c in zip(top.pc, top["count"])] == \
        [(h["pc"], h["count"]) for h in stat["hottest"]]
    assert df.tid.nunique() == len(stat["threads"])


def test_pandas_frames_per_vector(vector):
    pd = pytest.importorskip("pandas", reason="python3-pandas is not installed")
    stat = json_lines("stat", "--json", "--top", "5", vector)[0]
    with frames.open(vector) as t:
        df = t.instructions().to_pandas()
        ops = t.operands().to_pandas()
        sc = t.syscalls().to_pandas()
    counts = df.groupby("pc").size().reset_index(name="count")
    top = counts.sort_values(["count", "pc"], ascending=[False, True]).head(5)
    assert [(int(p), int(c)) for p, c in zip(top.pc, top["count"])] == \
        [(h["pc"], h["count"]) for h in stat["hottest"]]
    assert len(df) == stat["instructions"]
    assert len(sc) == stat["by_kind"]["syscall_frame"]
    assert len(ops) == len(json_lines("dump", "--jsonl", vector))


# ---- lifetime and threads -------------------------------------------------------------------

def test_close_while_iterating_raises():
    src = os.path.join(os.path.dirname(VECTORS[0]), "r10_default_m_n10001.frames")
    t = frames.open(src)
    it = iter(t)
    assert next(it).index == 0
    t.close()
    with pytest.raises(ValueError):
        next(it)
    with pytest.raises(ValueError):
        t[0]
    with pytest.raises(ValueError):
        t.instructions()


def test_threads_share_a_trace():
    """cffi lets other threads run during C calls: the trace's lock keeps its reader to
    one of them at a time; every thread gets what it gets alone."""
    import threading
    src = os.path.join(os.path.dirname(VECTORS[0]), "r10_default_m_n10001.frames")
    pcs = [int(l, 16) for l in run("dump", "--pc", src).decode().split()]
    with frames.open(src) as t:
        got, failures = {}, []

        def work(k):
            try:
                if k % 3 == 0:
                    got[k] = t.instructions().pc.tolist()
                elif k % 3 == 1:
                    got[k] = [f.address for f in t]
                else:
                    got[k] = [t[i].address for i in range(k, len(t), 97)]
            except BaseException as e:   # reported below, not lost in the thread
                failures.append(e)
        threads = [threading.Thread(target=work, args=(k,)) for k in range(9)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert not failures
    for k, v in got.items():
        assert v == (pcs if k % 3 != 2 else pcs[k::97]), k
