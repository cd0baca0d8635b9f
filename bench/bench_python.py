"""Speed of the Python package against the C reader, in the same run, on one trace.

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py build/frames [N] [--tenet DIR]

Writes a synthetic N-frame x86-64 trace with the package's writer (default 1,000,000
std frames: registers and a memory operand, 4 threads), then reports:
  - t.instructions() (index, pc, tid, size columns), frames/s, next to the C reader
    over the same file: `frames dump --pc` to /dev/null and `frames stat`;
  - t.operands() rows/s;
  - iteration over frame objects, frames/s, next to a plain Python reader of the text
    trace `frames tenet` makes of the same trace (split lines and items, parse the hex:
    the least any loader of that format does, Tenet's included), and, with --tenet DIR
    (a copy of Tenet, https://github.com/gaasedelen/tenet: its repository or its
    plugins/ folder), Tenet's own loader (tenet/trace/file.py's TraceFile, run outside
    the disassembler with its log function stubbed) on that text, with the messages it
    prints (e.g. MISSING INITIAL REGISTER VALUE);
  - the writer's frames/s (the trace above).
Best of 3 for the fast figures; times are wall clock on whatever else the machine runs.
"""
import os
import subprocess
import sys
import tempfile
import time

import frames


def best(fn, runs=3):
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        t.append(time.perf_counter() - t0)
    return min(t), out


def make_trace(path, n):
    code = b"\x48\x01\xd8"
    R = frames.Operand
    rax, rbx, mem = 0, 1, 0
    with frames.create(path, arch="i386", machine=64) as w:
        w.add(frames.ModloadFrame("/usr/bin/bench", 0x400000, 0x4FFFFF))
        for i in range(n):
            tid, k = 1 + (i // 64) % 4, i % 64
            pc = 0x401000 + 0x10000 * (tid - 1) + 0x100 * ((i // 512) % 97) + 3 * (k % 8) + 0x20 * (k // 8)
            addr = 0x7FF000 + 8 * (i % 512)
            pre = [R(name="RAX", value=rax.to_bytes(8, "little"), read=True),
                   R(name="RBX", value=rbx.to_bytes(8, "little"), read=True)]
            if i % 4 == 0:
                pre.append(R(address=addr, value=mem.to_bytes(8, "little"), read=True))
            post = [R(name="RAX", value=((rax + rbx) & (2**64 - 1)).to_bytes(8, "little"), written=True)]
            if i % 4 == 1:
                post.append(R(address=addr, value=mem.to_bytes(8, "little"), written=True))
            w.add(frames.StdFrame(pc, tid, code, pre, post))
            rax = (rax + rbx) & (2**64 - 1)
            mem ^= i


def parse_tenet_text(path):
    """Every line into {item: int} and memory items into (addr, bytes)."""
    steps = 0
    with open(path) as f:
        for line in f:
            regs, mems = {}, []
            for item in line.rstrip("\n").split(","):
                key, _, val = item.partition("=")
                if key in ("mr", "mw", "mrw"):
                    addr, _, data = val.partition(":")
                    mems.append((int(addr, 16), bytes.fromhex(data)))
                else:
                    regs[key] = int(val, 16)
            steps += 1
    return steps


def tenet_loader(where):
    """Tenet's TraceFile and its architectures from a user's copy of Tenet, and the list
    its messages go to. Only tenet/util/log.py needs the disassembler: it is replaced by
    a module whose pmsg collects the messages."""
    import importlib
    import types
    for plugins in (os.path.join(where, "plugins"), where, os.path.dirname(where)):
        if os.path.isfile(os.path.join(plugins, "tenet", "trace", "file.py")):
            break
    else:
        sys.exit("bench_python: --tenet %s: no tenet/trace/file.py there" % where)
    messages = []
    util = types.ModuleType("tenet.util")
    util.__path__ = []
    log = types.ModuleType("tenet.util.log")
    log.pmsg = messages.append
    sys.modules["tenet.util"], sys.modules["tenet.util.log"] = util, log
    sys.path.insert(0, plugins)
    sys.dont_write_bytecode = True
    tfile = importlib.import_module("tenet.trace.file")
    return tfile.TraceFile, tfile.ArchAMD64, messages


def tenet_load(where, text):
    """Seconds Tenet's loader takes on the text trace, its steps, and its messages by count."""
    TraceFile, ArchAMD64, messages = tenet_loader(where)
    t0 = time.perf_counter()
    tf = TraceFile(text, arch=ArchAMD64())   # also writes TEXT's packed .tt beside it
    secs = time.perf_counter() - t0
    counts = {}
    for m in messages:
        counts[m] = counts.get(m, 0) + 1
    return secs, tf.length, counts


def main():
    args = sys.argv[1:]
    tenet_dir = None
    if "--tenet" in args:
        k = args.index("--tenet")
        if k + 1 >= len(args):
            sys.exit("bench_python: --tenet needs a directory")
        tenet_dir = args[k + 1]
        del args[k:k + 2]
    fbin = args[0]
    n = int(args[1]) if len(args) > 1 else 1000000
    tmp = tempfile.mkdtemp(prefix="bench_python.")
    trace, text = os.path.join(tmp, "t.frames"), os.path.join(tmp, "t.log")
    try:
        t0 = time.perf_counter()
        make_trace(trace, n)
        write_s = time.perf_counter() - t0
        size = os.path.getsize(trace)
        print("trace: %d frames, %.1f MB (written by frames.create: %.0f frames/s)"
              % (n + 1, size / 1e6, (n + 1) / write_s))

        with frames.open(trace) as t:
            s_cols, ins = best(t.instructions)
            assert len(ins) == n
            s_ops, ops = best(t.operands, 1)
            rows = len(ops)
        devnull = open(os.devnull, "wb")
        s_pc, _ = best(lambda: subprocess.run([fbin, "dump", "--pc", trace], stdout=devnull,
                                              check=True))
        s_stat, _ = best(lambda: subprocess.run([fbin, "stat", trace], stdout=devnull,
                                                stderr=devnull, check=True))   # no module file
        print("t.instructions()        %8.3f s  %6.1f M frames/s" % (s_cols, n / s_cols / 1e6))
        print("frames dump --pc (C)    %8.3f s  %6.1f M frames/s   ratio python/C %.2f"
              % (s_pc, n / s_pc / 1e6, s_pc / s_cols))
        print("frames stat (C)         %8.3f s  %6.1f M frames/s   ratio python/C %.2f"
              % (s_stat, n / s_stat / 1e6, s_stat / s_cols))
        print("t.operands()            %8.3f s  %6.1f M rows/s (%d rows)" % (s_ops, rows / s_ops / 1e6, rows))

        with frames.open(trace) as t:
            t0 = time.perf_counter()
            count = sum(1 for _ in t)
            s_iter = time.perf_counter() - t0
        subprocess.run([fbin, "tenet", trace, "-o", text], stdout=devnull, stderr=devnull, check=True)
        t0 = time.perf_counter()
        steps = parse_tenet_text(text)
        s_text = time.perf_counter() - t0
        print("for f in t (objects)    %8.3f s  %6.0f k frames/s" % (s_iter, count / s_iter / 1e3))
        print("tenet text, parsed      %8.3f s  %6.0f k lines/s (%d lines, %.1f MB; one thread)"
              "   ratio text/objects %.2f"
              % (s_text, steps / s_text / 1e3, steps, os.path.getsize(text) / 1e6,
                 (steps / s_text) / (count / s_iter)))
        if tenet_dir:
            s_tenet, tsteps, msgs = tenet_load(tenet_dir, text)
            print("Tenet's loader          %8.3f s  %6.0f k lines/s (%d steps)"
                  "   ratio Tenet/objects %.2f"
                  % (s_tenet, tsteps / s_tenet / 1e3, tsteps, (tsteps / s_tenet) / (count / s_iter)))
            for m, k in sorted(msgs.items()):
                print("  Tenet said %dx: %s" % (k, m))
    finally:
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
