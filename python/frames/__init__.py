"""frames: read and write BAP frames traces (.frames, .frames.zst) from Python.

    import frames
    with frames.open("trace.frames") as t:
        print(len(t), t.arch, t.meta["tracer_name"] if t.meta else None)
        f = t[1000]                     # O(1) through the trace's TOC
        for f in t:                     # light frame objects
            if f.kind == "std": ...
        ins = t.instructions()          # numpy columns: index, pc, tid, size
        df = ins.to_pandas()            # when pandas is installed

    with frames.create("out.frames.zst", arch="i386", machine=64) as w:
        w.add(frames.StdFrame(address=0x401000, thread_id=1, rawbytes=b"\\x90"))

The work is done by the C library (frames.h and its companions) through cffi; columns
are filled by C loops, never one Python object per frame. See docs/python.md.
"""
import operator
import os
import struct
import threading
from collections import namedtuple
from ctypes import string_at

from ._native import ffi, lib

__all__ = [
    "open", "create", "Trace", "Writer", "FramesError", "Columns", "Operand", "Taint",
    "Frame", "StdFrame", "SyscallFrame", "ExceptionFrame", "TaintIntro", "TaintIntroFrame",
    "ModloadFrame", "TaggedValues", "KeyFrame", "UnknownFrame", "QueryResult", "Binding",
    "State", "Memory", "Access", "HAVE_ZSTD",
]

HAVE_ZSTD = bool(lib.pyf_have_zstd)
_NO_POS = lib.FRAMES_NO_POS


# ---- errors ------------------------------------------------------------------------

class FramesError(Exception):
    """An error of the library: `message` (what the C library says, with the position),
    `code` (negative FRAMES_E_* value), `reason` (the code's description), `offset` (file
    offset or None) and `frame` (frame index or None)."""

    def __init__(self, message, code=-7, offset=None, frame=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.reason = ffi.string(lib.frames_strerror(code)).decode()
        self.offset = offset
        self.frame = frame


def _error(err, code=None, what=None):
    """A FramesError from a frames_error (what: a prefix such as the path)."""
    code = err.code if err.code else (code if code is not None else -7)
    msg = ffi.string(err.message).decode("utf-8", "replace") if err.code else \
        ffi.string(lib.frames_strerror(code)).decode()
    if what:
        msg = "%s: %s" % (what, msg)
    return FramesError(msg, code,
                       None if err.offset == _NO_POS else int(err.offset),
                       None if err.frame == _NO_POS else int(err.frame))


def _raise_if(rc, err, what=None):
    if rc < 0:
        raise _error(err, rc, what)
    return rc


# ---- the frame model -----------------------------------------------------------------

def _b(view):
    """bytes of a frames_bytes view (copied: views die with the next frame)."""
    return ffi.buffer(view.ptr, view.len)[:] if view.len else b""


def _s(view):
    """str of a name view; bytes that are not UTF-8 survive a round trip (surrogateescape)."""
    return ffi.buffer(view.ptr, view.len)[:].decode("utf-8", "surrogateescape") if view.len else ""


def _enc(s):
    return s.encode("utf-8", "surrogateescape") if isinstance(s, str) else bytes(s)


class _Slots:
    """Equality, repr and keyword construction from __slots__."""
    __slots__ = ()

    def _fields(self):
        return [(n, getattr(self, n)) for n in self.__slots__]

    def __eq__(self, other):
        return type(self) is type(other) and self._fields() == other._fields()

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__,
                           ", ".join("%s=%r" % kv for kv in self._fields()
                                     if kv[1] is not None))


Taint = namedtuple("Taint", "no_taint id multiple", defaults=(None, None, None))
Taint.__doc__ = """taint_info: each of no_taint (bool), id (int), multiple (bool) is None when
absent from the trace. An operand whose taint is None is written as no_taint: true (as every
tracer writes it); a key frame value whose taint is None gets no taint_info."""


class Operand(_Slots):
    """An operand (operand_info of std frames, value_info of key frames): a register
    (`name`) or a memory operand (`address`), its `value` bytes (little-endian),
    `bit_length`, the usage flags `read`, `written`, `index`, `base`, and `taint`."""
    __slots__ = ("name", "address", "value", "bit_length", "read", "written", "index", "base",
                 "taint")

    def __init__(self, name=None, address=None, value=b"", bit_length=None, read=False,
                 written=False, index=False, base=False, taint=None):
        self.name = name
        self.address = address
        self.value = bytes(value)
        self.bit_length = len(self.value) * 8 if bit_length is None else bit_length
        self.read, self.written, self.index, self.base = read, written, index, base
        self.taint = taint

    @property
    def is_mem(self):
        return self.address is not None

    @property
    def uint(self):
        """The value as a little-endian unsigned integer."""
        return int.from_bytes(self.value, "little")


class Frame(_Slots):
    """Base of the frame classes; `kind` names the frame kind, `index` is the frame's
    position in the trace it was read from (None for frames made in Python)."""
    __slots__ = ()
    kind = None


class StdFrame(Frame):
    """std_frame: one executed instruction. `post` is None when the trace has no
    operand_post_list (not the same as an empty one); `mode` None when absent."""
    __slots__ = ("index", "address", "thread_id", "rawbytes", "pre", "post", "mode")
    kind = "std"

    def __init__(self, address=0, thread_id=0, rawbytes=b"", pre=(), post=None, mode=None,
                 index=None):
        self.index = index
        self.address, self.thread_id, self.rawbytes = address, thread_id, bytes(rawbytes)
        self.pre = list(pre)
        self.post = None if post is None else list(post)
        self.mode = mode


class SyscallFrame(Frame):
    __slots__ = ("index", "address", "thread_id", "number", "args")
    kind = "syscall"

    def __init__(self, address=0, thread_id=0, number=0, args=(), index=None):
        self.index = index
        self.address, self.thread_id, self.number, self.args = address, thread_id, number, list(args)


class ExceptionFrame(Frame):
    """exception_frame; thread_id, from_addr, to_addr are None when absent."""
    __slots__ = ("index", "number", "thread_id", "from_addr", "to_addr")
    kind = "exception"

    def __init__(self, number=0, thread_id=None, from_addr=None, to_addr=None, index=None):
        self.index = index
        self.number, self.thread_id, self.from_addr, self.to_addr = number, thread_id, from_addr, to_addr


class TaintIntro(_Slots):
    """One element of a taint_intro_frame; offset, value, source_name None when absent."""
    __slots__ = ("addr", "taint_id", "offset", "value", "source_name")

    def __init__(self, addr=0, taint_id=0, offset=None, value=None, source_name=None):
        self.addr, self.taint_id, self.offset = addr, taint_id, offset
        self.value, self.source_name = value, source_name


class TaintIntroFrame(Frame):
    __slots__ = ("index", "intros")
    kind = "taint_intro"

    def __init__(self, intros=(), index=None):
        self.index, self.intros = index, list(intros)


class ModloadFrame(Frame):
    """modload_frame: module_name mapped at [low_address, high_address] (inclusive)."""
    __slots__ = ("index", "module_name", "low_address", "high_address")
    kind = "modload"

    def __init__(self, module_name="", low_address=0, high_address=0, index=None):
        self.index = index
        self.module_name, self.low_address, self.high_address = module_name, low_address, high_address


class TaggedValues(_Slots):
    """A tagged value list of a key frame. Its value_source_tag is thread_id (an int) or
    no_thread_id (a bool; True by default when thread_id is None); None means absent."""
    __slots__ = ("thread_id", "no_thread_id", "values")

    def __init__(self, thread_id=None, values=(), no_thread_id=None):
        self.thread_id, self.values = thread_id, list(values)
        if no_thread_id is None and thread_id is None:
            no_thread_id = True
        self.no_thread_id = no_thread_id


class KeyFrame(Frame):
    __slots__ = ("index", "lists")
    kind = "key"

    def __init__(self, lists=(), index=None):
        self.index, self.lists = index, list(lists)


class UnknownFrame(Frame):
    """A frame option this library does not know (kept so that it is written again),
    or an empty frame (field 0)."""
    __slots__ = ("index", "field", "wire_type", "scalar", "payload")
    kind = "unknown"

    def __init__(self, field=0, wire_type=0, scalar=0, payload=b"", index=None):
        self.index, self.field, self.wire_type = index, field, wire_type
        self.scalar, self.payload = scalar, bytes(payload)


# decoding: C frame -> Python objects

def _taint(t):
    s = t.set
    if not s:
        return None
    return Taint(bool(t.no_taint) if s & lib.FRAMES_TAINT_NONE else None,
                 int(t.id) if s & lib.FRAMES_TAINT_ID else None,
                 bool(t.multiple) if s & lib.FRAMES_TAINT_MULTIPLE else None)


def _operand_struct():
    """A struct.Struct over frames_operand's memory (layout from the compiler, through
    cffi), so that an operand list is read by struct.iter_unpack in one call instead of
    one cffi attribute access per field: iteration's hot loop."""
    fields = [("spec",), ("read",), ("written",), ("index",), ("base",), ("bit_length",),
              ("address",), ("name", "ptr"), ("name", "len"), ("taint", "set"),
              ("taint", "no_taint"), ("taint", "multiple"), ("taint", "id"),
              ("value", "ptr"), ("value", "len")]
    codes = {1: "B", 2: "H", 4: "I", 8: "Q"}
    fmt, at = "=", 0
    for path in fields:
        off = ffi.offsetof("frames_operand", *path)
        t = ffi.typeof("frames_operand")
        for name in path:
            t = dict(t.fields)[name].type
        size = ffi.sizeof(t)
        fmt += "%dx" % (off - at) if off > at else ""
        fmt += "i" if path == ("bit_length",) else codes[size]
        at = off + size
    size = ffi.sizeof("frames_operand")
    fmt += "%dx" % (size - at) if size > at else ""
    st = struct.Struct(fmt)
    assert st.size == size
    return st


_OPERAND = _operand_struct()
_OPERAND_SIZE = _OPERAND.size
_TAINT_NONE_SET = lib.FRAMES_TAINT_NONE
_NO_TAINT = Taint(no_taint=True)


def _taint_of(tset, no_taint, multiple, tid):
    if tset == _TAINT_NONE_SET and no_taint:
        return _NO_TAINT
    if not tset:
        return None
    return Taint(bool(no_taint) if tset & 1 else None, tid if tset & 2 else None,
                 bool(multiple) if tset & 4 else None)


def _operands(ops, n, payload, base):
    """Operands; their names and values are views into the frame's payload, which the
    caller copied once into `payload` (bytes) from address `base`: slices of it."""
    out = []
    new, end = Operand.__new__, base + len(payload)
    for (spec, rd, wr, ix, bs, bits, addr, nptr, nlen, tset, tnone, tmult, tid, vptr,
         vlen) in _OPERAND.iter_unpack(ffi.buffer(ops, n * _OPERAND_SIZE)):
        op = new(Operand)
        if spec & 2:
            name = payload[nptr - base:nptr - base + nlen] if base <= nptr <= end - nlen \
                else string_at(nptr, nlen)
            op.name = name.decode("utf-8", "surrogateescape")
        else:
            op.name = None
        op.address = addr if spec & 1 else None
        if not vlen:
            op.value = b""
        elif base <= vptr <= end - vlen:
            op.value = payload[vptr - base:vptr - base + vlen]
        else:
            op.value = string_at(vptr, vlen)
        op.bit_length = bits
        op.read, op.written, op.index, op.base = rd != 0, wr != 0, ix != 0, bs != 0
        op.taint = _taint_of(tset, tnone, tmult, tid)
        out.append(op)
    return out


def _std(f, index, payload, base):
    s = f.std
    fr = StdFrame.__new__(StdFrame)
    fr.index, fr.address, fr.thread_id = index, s.address, s.thread_id
    fr.rawbytes = ffi.buffer(s.rawbytes.ptr, s.rawbytes.len)[:] if s.rawbytes.len else b""
    fr.pre = _operands(s.pre, s.npre, payload, base) if s.npre else []
    fr.post = (_operands(s.post, s.npost, payload, base) if s.npost else []) \
        if s.has_post else None
    fr.mode = _s(s.mode) if s.has_mode else None
    return fr


def _syscall(f, index, payload=b"", base=0):
    s = f.syscall
    return SyscallFrame(s.address, s.thread_id, s.number,
                        [s.args[i] for i in range(s.nargs)], index)


def _exception(f, index, payload=b"", base=0):
    e = f.exception
    return ExceptionFrame(e.number, e.thread_id if e.has_thread_id else None,
                          e.from_addr if e.has_from_addr else None,
                          e.to_addr if e.has_to_addr else None, index)


def _taint_intro(f, index, payload=b"", base=0):
    t = f.taint_intro
    intros = []
    for i in range(t.count):
        x = t.intros[i]
        intros.append(TaintIntro(x.addr, x.taint_id, x.offset if x.has_offset else None,
                                 _b(x.value) if x.has_value else None,
                                 _s(x.source_name) if x.has_source_name else None))
    return TaintIntroFrame(intros, index)


def _modload(f, index, payload=b"", base=0):
    m = f.modload
    return ModloadFrame(_s(m.module_name), m.low_address, m.high_address, index)


def _key(f, index, payload=b"", base=0):
    k = f.key
    lists = []
    for i in range(k.count):
        l = k.lists[i]
        tv = TaggedValues.__new__(TaggedValues)
        tv.thread_id = l.thread_id if l.tag_set & lib.FRAMES_TAG_THREAD_ID else None
        tv.no_thread_id = bool(l.no_thread_id) if l.tag_set & lib.FRAMES_TAG_NO_THREAD_ID else None
        tv.values = _operands(l.values, l.count, payload, base)
        lists.append(tv)
    return KeyFrame(lists, index)


def _unknown(f, index, payload=b"", base=0):
    u = f.unknown
    return UnknownFrame(u.field, u.wire_type, u.scalar, _b(u.payload), index)


_DECODE = {1: _std, 2: _syscall, 3: _exception, 4: _taint_intro, 5: _modload, 6: _key}


def _frame(f, index, raw):
    """The frame object of decoded frame f, whose payload raw describes."""
    payload = ffi.buffer(raw.payload.ptr, raw.payload.len)[:]
    base = int(ffi.cast("uintptr_t", raw.payload.ptr))
    dec = _DECODE.get(f.kind, _unknown)
    return dec(f, index, payload, base)


# encoding: Python objects -> C frame (keep: everything the C frame points to)

def _view(dst, data, keep):
    if data:
        buf = ffi.from_buffer("uint8_t[]", data)
        keep.append(buf)
        dst.ptr, dst.len = buf, len(data)


def _fill_taint(t, taint):
    if taint is None:
        return
    if taint.no_taint is not None:
        t.set |= lib.FRAMES_TAINT_NONE
        t.no_taint = bool(taint.no_taint)
    if taint.id is not None:
        t.set |= lib.FRAMES_TAINT_ID
        t.id = taint.id
    if taint.multiple is not None:
        t.set |= lib.FRAMES_TAINT_MULTIPLE
        t.multiple = bool(taint.multiple)


def _c_operands(ops, keep):
    arr = ffi.new("frames_operand[]", len(ops))
    keep.append(arr)
    for i, op in enumerate(ops):
        o = arr[i]
        if op.address is not None:
            o.spec |= lib.FRAMES_MEM
            o.address = op.address
        if op.name is not None:
            o.spec |= lib.FRAMES_REG
            _view(o.name, _enc(op.name), keep)
        o.read, o.written, o.index, o.base = bool(op.read), bool(op.written), bool(op.index), bool(op.base)
        o.bit_length = op.bit_length
        _fill_taint(o.taint, op.taint)
        _view(o.value, bytes(op.value), keep)
    return arr


def _c_frame(fr, keep):
    f = ffi.new("frames_frame *")
    keep.append(f)
    kind = fr.kind
    if kind == "std":
        s = f.std
        f.kind = 1
        s.address, s.thread_id = fr.address, fr.thread_id
        _view(s.rawbytes, bytes(fr.rawbytes), keep)
        s.pre, s.npre = _c_operands(fr.pre, keep), len(fr.pre)
        if fr.post is not None:
            s.has_post = 1
            s.post, s.npost = _c_operands(fr.post, keep), len(fr.post)
        if fr.mode is not None:
            s.has_mode = 1
            _view(s.mode, _enc(fr.mode), keep)
    elif kind == "syscall":
        s = f.syscall
        f.kind = 2
        s.address, s.thread_id, s.number = fr.address, fr.thread_id, fr.number
        args = ffi.new("int64_t[]", list(fr.args))
        keep.append(args)
        s.args, s.nargs = args, len(fr.args)
    elif kind == "exception":
        e = f.exception
        f.kind = 3
        e.number = fr.number
        for name in ("thread_id", "from_addr", "to_addr"):
            v = getattr(fr, name)
            if v is not None:
                setattr(e, name, v)
                setattr(e, "has_" + name, 1)
    elif kind == "taint_intro":
        f.kind = 4
        arr = ffi.new("frames_taint_intro[]", len(fr.intros))
        keep.append(arr)
        for i, x in enumerate(fr.intros):
            c = arr[i]
            c.addr, c.taint_id = x.addr, x.taint_id
            if x.offset is not None:
                c.offset, c.has_offset = x.offset, 1
            if x.value is not None:
                c.has_value = 1
                _view(c.value, bytes(x.value), keep)
            if x.source_name is not None:
                c.has_source_name = 1
                _view(c.source_name, _enc(x.source_name), keep)
        f.taint_intro.intros, f.taint_intro.count = arr, len(fr.intros)
    elif kind == "modload":
        f.kind = 5
        _view(f.modload.module_name, _enc(fr.module_name), keep)
        f.modload.low_address, f.modload.high_address = fr.low_address, fr.high_address
    elif kind == "key":
        f.kind = 6
        arr = ffi.new("frames_tagged_values[]", len(fr.lists))
        keep.append(arr)
        for i, l in enumerate(fr.lists):
            if l.thread_id is not None:
                arr[i].tag_set |= lib.FRAMES_TAG_THREAD_ID
                arr[i].thread_id = l.thread_id
            if l.no_thread_id is not None:
                arr[i].tag_set |= lib.FRAMES_TAG_NO_THREAD_ID
                arr[i].no_thread_id = bool(l.no_thread_id)
            arr[i].values, arr[i].count = _c_operands(l.values, keep), len(l.values)
        f.key.lists, f.key.count = arr, len(fr.lists)
    elif kind == "unknown":
        f.kind = 7 if fr.field else 0
        u = f.unknown
        u.field, u.wire_type, u.scalar = fr.field, fr.wire_type, fr.scalar
        _view(u.payload, bytes(fr.payload), keep)
    else:
        raise TypeError("not a frame: %r" % (fr,))
    return f


# ---- meta ------------------------------------------------------------------------------

_META_STR = ("tracer_name", "tracer_version", "target_path", "user", "host")
_META_LIST = ("tracer_args", "tracer_envp", "target_args", "target_envp")
_META_NUM = ("fstats_size", "fstats_atime", "fstats_mtime", "fstats_ctime", "time")


def _meta(m):
    if m == ffi.NULL:
        return None
    d = {}
    for name in _META_STR:
        d[name] = _s(getattr(m, name))
    for name in _META_LIST:
        arr, n = getattr(m, name), getattr(m, "n" + name)
        d[name] = [_s(arr[i]) for i in range(n)]
    d["target_md5sum"] = _b(m.target_md5sum)
    for name in _META_NUM:
        d[name] = getattr(m, name)
    return d


def _c_meta(d, keep):
    if d is None:
        return ffi.NULL
    m = ffi.new("frames_meta *")
    keep.append(m)
    for name in _META_STR:
        _view(getattr(m, name), _enc(d.get(name, "")), keep)
    for name in _META_LIST:
        items = [_enc(x) for x in d.get(name, ())]
        arr = ffi.new("frames_bytes[]", len(items))
        keep.append(arr)
        for i, x in enumerate(items):
            _view(arr[i], x, keep)
        setattr(m, name, arr)
        setattr(m, "n" + name, len(items))
    _view(m.target_md5sum, bytes(d.get("target_md5sum", b"")), keep)
    for name in _META_NUM:
        setattr(m, name, d.get(name, 0))
    return m


# ---- names of architectures and TOC conventions ----------------------------------------

_ARCH_NAMES = {}
for _i in range(83):
    _ARCH_NAMES.setdefault(ffi.string(lib.frames_arch_name(_i)).decode(), _i)
_TOC_NAMES = {ffi.string(lib.frames_toc_name(_i)).decode(): _i for _i in range(9)}


def _arch_number(arch):
    if isinstance(arch, int):
        return arch
    try:
        return _ARCH_NAMES[arch]
    except KeyError:
        raise ValueError("unknown architecture %r (names: frames_arch_name, e.g. 'i386', "
                         "'arm', 'aarch64')" % (arch,)) from None


# ---- columns ------------------------------------------------------------------------------

def _col_array(col, dtype):
    """A numpy copy of a C column (the C side frees its own memory afterwards)."""
    import numpy as np
    if not col.n:
        return np.zeros(0, dtype)
    return np.frombuffer(ffi.buffer(col.data, col.n * col.elem), dtype).copy()


class Columns:
    """Named numpy arrays of equal length (a table without a Python object per row).
    `cols["pc"]` or `cols.pc`; `to_pandas()` builds a DataFrame (pandas needed)."""

    def __init__(self, arrays, pandas=None):
        self._arrays = dict(arrays)
        self._pandas = pandas

    def __getitem__(self, name):
        return self._arrays[name]

    def __getattr__(self, name):
        try:
            return self.__dict__["_arrays"][name]
        except KeyError:
            raise AttributeError(name) from None

    def keys(self):
        return list(self._arrays)

    def __contains__(self, name):
        return name in self._arrays

    def __len__(self):
        return len(next(iter(self._arrays.values()))) if self._arrays else 0

    def __repr__(self):
        return "Columns(%d rows: %s)" % (len(self), ", ".join(self._arrays))

    def to_pandas(self):
        import pandas as pd
        if self._pandas:
            return self._pandas(self, pd)
        return pd.DataFrame(self._arrays)


def _masked(pd, values, present):
    """A nullable UInt64 column: values where present, <NA> elsewhere."""
    return pd.arrays.IntegerArray(values, ~present)


OPERAND_LISTS = ("pre", "post", "key")
OPERAND_KINDS = ("none", "reg", "mem")


def _operands_pandas(c, pd):
    import numpy as np
    names = pd.Categorical.from_codes(c.name_id, categories=c.names) if len(c.names) else \
        pd.Categorical([None] * len(c), categories=[])
    off = c.value_off
    data = c.value_data.tobytes()
    return pd.DataFrame({
        "frame": c.frame,
        "pc": _masked(pd, c.pc, c.has_pc),
        "tid": _masked(pd, c.tid, c.has_tid),
        "list": pd.Categorical.from_codes(c.list, categories=OPERAND_LISTS),
        "kind": pd.Categorical.from_codes(c.kind, categories=OPERAND_KINDS),
        "name": names,
        "address": _masked(pd, c.address, c.kind == 2),
        "bits": c.bits,
        "read": c.read, "written": c.written, "index": c.index, "base": c.base,
        "taint_id": _masked(pd, c.taint_id, c.has_taint_id),
        "value": [data[off[i]:off[i + 1]] for i in range(len(c))],
        "value_uint": _masked(pd, c.value_uint, np.diff(off) <= 8),
    })


def _syscalls_pandas(c, pd):
    off, args = c.args_off, c.args
    return pd.DataFrame({"frame": c.frame, "pc": c.pc, "tid": c.tid, "number": c.number,
                         "args": [args[off[i]:off[i + 1]].tolist() for i in range(len(c))]})


# ---- query results --------------------------------------------------------------------------

Binding = namedtuple("Binding", "name type value addr bits read written post bytes")
Binding.__doc__ = """A free variable's binding: the operand's register `name` (None for memory
operands), its `type` ("reg64", "mem32", ...), `value` (unsigned integer), `addr` (memory
operands, else None), `bits`, usage flags, whether it comes from the post list, raw bytes."""
QueryResult = namedtuple("QueryResult", "frame pc tid vars")
QueryResult.__doc__ = """A query result: frame index, pc, thread id and {variable: Binding}."""


@ffi.def_extern()
def pyf_on_result(ctx, r):
    sink = ffi.from_handle(ctx)
    try:
        bound = {}
        for i in range(r.nbind):
            b = r.bind[i]
            var = ffi.string(r.var_names[b.var]).decode("utf-8", "surrogateescape")
            fl = b.flags
            value = None if b.format == lib.FQ_TYPE_BLOB else b.u
            bound[var] = Binding(_s(b.name) if fl & lib.FQ_B_REG else None, _s(b.type), value,
                                 b.addr if fl & lib.FQ_B_MEM else None, b.bits,
                                 bool(fl & lib.FQ_B_READ), bool(fl & lib.FQ_B_WRITTEN),
                                 bool(fl & lib.FQ_B_POST), _b(b.bytes))
        sink.append(QueryResult(r.counter, r.stmt, r.tid if r.has_tid else None, bound))
        return 0
    except BaseException as e:   # stop the run; re-raised by Trace.query
        sink.failure = e
        return 1


class _ResultSink(list):
    failure = None


# ---- time travel (frames_replay.h; docs/timetravel.md) -------------------------------------

Memory = namedtuple("Memory", "data known")
Memory.__doc__ = """Memory before an instruction: `data` (bytes; 0 where unknown) and `known`
(bytes of 1 known, 0 unknown, one per byte). `hex()` writes unknown bytes as "??"."""
Memory.hex = lambda m: "".join("%02x" % b if k else "??" for b, k in zip(m.data, m.known))

Access = namedtuple("Access", "index pc thread access address size register value")
Access.__doc__ = """One read or write of what Trace.history asked for: instruction `index`,
its `pc` and `thread`, `access` "read" (a value before it) or "write" (after it), `address`
(memory; None for a register) and `size` in bytes, `register` (the name the trace used,
lower case; None for memory), `value` as an int (little-endian operand bytes, at most 64) or
None when the operand has no value."""


class State(dict):
    """The registers before instruction `index` as {name: int}: the full registers of the
    architecture (gdb's lower-case names) whose every byte is known; unknown ones are absent.
    `thread` and `pc` are those of instruction `index` (after the last instruction: the
    thread that ran it, pc None). memory(addr, n) reads memory at the same point."""

    def __init__(self, trace, index, thread, pc, registers):
        super().__init__(registers)
        self.index, self.thread, self.pc = index, thread, pc
        self._trace = trace

    def memory(self, addr, n):
        """Memory [addr, addr+n) before the instruction: a Memory(data, known)."""
        return self._trace._replay_memory(self.index, addr, n)

    def __repr__(self):
        return "State(index=%d, thread=%d, pc=%s, %s)" % (
            self.index, self.thread, None if self.pc is None else hex(self.pc),
            dict.__repr__(self))


# ---- reading -------------------------------------------------------------------------------

def _locked(method):
    """The method under the trace's lock (see Trace.__init__)."""
    def run(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    run.__name__, run.__doc__ = method.__name__, method.__doc__
    return run


class Trace:
    """An open trace (frames.open). Frames are read through the trace's TOC: len(t) and
    t[i] need no scan of a finished trace; iteration, t.instructions(), t.operands()
    and t.syscalls() each read with a cursor of their own, so they can be mixed freely.

    The time-travel state (t.state(i), t.history(...)) comes from frames_replay.h and its
    state index (TRACE.fridx beside the trace, built on first use)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._r = None
        self._sym = None
        self._fq = None
        self._replay = None
        self._replay_index = None
        self._len = None
        # cffi releases the GIL during C calls: one lock per trace keeps two threads off
        # the reader at once, and close() off the cursors that iterators still hold
        self._lock = threading.RLock()
        self._cursors = {}
        err = ffi.new("frames_error *")
        r = ffi.new("frames_reader **")
        _raise_if(lib.pyf_reader_open(r, os.fsencode(self.path), err), err)
        self._r = r[0]
        self._f = ffi.new("frames_frame *")
        self._raw = ffi.new("frames_raw *")
        h = lib.frames_reader_header(self._r)
        self.version = h.version
        self.arch_number = h.arch
        self.machine = h.machine
        self.arch = ffi.string(lib.frames_arch_name(h.arch)).decode()
        self.meta = _meta(lib.frames_reader_meta(self._r))

    # lifetime
    def close(self):
        with self._lock:
            self._close()

    def _close(self):
        for box in self._cursors.values():   # cursors use their reader: before it
            lib.frames_cursor_close(box[0])
            box[0] = None
        self._cursors.clear()
        if self._sym is not None:
            lib.frames_sym_close(self._sym)
            self._sym = None
        if self._fq is not None:
            lib.fq_trace_close(self._fq)
            self._fq = None
        if self._replay is not None:
            lib.frames_replay_close(self._replay)
            self._replay = None
        if self._r is not None:
            lib.frames_reader_close(self._r)
            self._r = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_r", None) is not None:
            self.close()

    def _reader(self):
        if self._r is None:
            raise ValueError("I/O operation on a closed trace")
        return self._r

    def _last_error(self, rc):
        return _error(lib.frames_reader_error(self._r), rc)

    # sequence
    def __len__(self):
        with self._lock:
            return self._count()

    def _count(self):
        if self._len is None:
            n = ffi.new("uint64_t *")
            rc = lib.frames_reader_count(self._reader(), n)
            if rc < 0:
                raise self._last_error(rc)
            self._len = int(n[0])
        return self._len

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = i.__index__()
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("frame index %d out of range (%d frames)" % (i, n))
        with self._lock:
            r = self._reader()
            rc = lib.frames_reader_seek(r, i)
            if rc >= 0:
                rc = lib.frames_reader_next_full(r, self._f, self._raw)
            if rc < 0:
                raise self._last_error(rc)
            if rc == 0:
                raise IndexError("frame %d: the trace ends before it" % i)
            return _frame(self._f, i, self._raw)

    def __iter__(self):
        return self.frames()

    def frames(self, start=0, stop=None):
        """Frame objects start..stop-1 (a cursor of their own)."""
        err = ffi.new("frames_error *")
        stop = len(self) if stop is None else min(stop, len(self))
        with self._lock:
            c = ffi.new("frames_cursor **")
            _raise_if(lib.frames_cursor_open(c, self._reader(), start, err), err)
            box = [c[0]]
            self._cursors[id(box)] = box
        dec = lib.pyf_decoder_open()
        if dec == ffi.NULL:
            self._drop_cursor(box)
            raise MemoryError()
        dec = ffi.gc(dec, lib.pyf_decoder_close)
        f, raw = ffi.new("frames_frame *"), ffi.new("frames_raw *")
        nxt, decode, lock, buf, cast = lib.pyf_cursor_next, _DECODE, self._lock, ffi.buffer, ffi.cast
        i = start
        try:
            while i < stop:
                with lock:
                    if box[0] is None:
                        raise ValueError("I/O operation on a closed trace")
                    rc = nxt(self._r, box[0], dec, f, raw, err)
                    if rc <= 0:
                        if rc < 0:
                            raise _error(err, rc)
                        return
                    p = raw.payload
                    frame = decode.get(f.kind, _unknown)(f, i, buf(p.ptr, p.len)[:],
                                                         int(cast("uintptr_t", p.ptr)))
                yield frame
                i += 1
        finally:
            self._drop_cursor(box)

    def _drop_cursor(self, box):
        with self._lock:
            if box[0] is not None:
                lib.frames_cursor_close(box[0])
                box[0] = None
            self._cursors.pop(id(box), None)

    # information
    @property
    @_locked
    def info(self):
        """The reader's report: TOC convention, truncation, warnings (a dict)."""
        st = ffi.new("frames_reader_info *")
        r = self._reader()
        lib.frames_reader_info_get(r, st)
        return {
            "finished": bool(st.finished), "toc": ffi.string(lib.frames_toc_name(st.toc)).decode(),
            "frames_per_toc": st.frames_per_toc, "toc_used": bool(st.toc_used),
            "file_size": st.file_size, "truncated": bool(st.truncated),
            "truncated_offset": st.truncated_offset if st.truncated else None,
            "warnings": [ffi.string(lib.frames_reader_warning(r, i)).decode("utf-8", "replace")
                         for i in range(st.nwarnings)],
        }

    def __repr__(self):
        state = "closed" if self._r is None else "%s v%d" % (self.arch, self.version)
        return "<frames.Trace %r %s>" % (self.path, state)

    # columns
    def _range(self, start, stop):
        n = len(self)
        stop = n if stop is None else min(stop, n)
        return max(0, start), max(stop, 0)

    @_locked
    def instructions(self, start=0, stop=None, check=False):
        """std frames of frames start..stop-1 as numpy columns: index (frame index), pc,
        tid and size (bytes of the instruction). Frames are read at the pace of the
        container walk: a std_frame laid out as writers write it gives its address,
        thread and length without its operand lists being decoded (frames_peek_std);
        check=True decodes every frame in full, so that damage inside operand lists
        raises here too (slower by the cost of decoding the operands)."""
        import numpy as np
        start, stop = self._range(start, stop)
        cap = max(stop - start, 0)
        index, pc, tid = (np.empty(cap, np.uint64) for _ in range(3))
        size = np.empty(cap, np.uint32)
        c = ffi.new("pyf_insn_cols *")
        c.index = ffi.from_buffer("uint64_t[]", index)
        c.pc = ffi.from_buffer("uint64_t[]", pc)
        c.tid = ffi.from_buffer("uint64_t[]", tid)
        c.size = ffi.from_buffer("uint32_t[]", size)
        c.cap = cap
        err = ffi.new("frames_error *")
        if cap:
            _raise_if(lib.pyf_instructions(self._reader(), start, stop, 1 if check else 0, c, err),
                      err)
        n = c.n
        cols = {"index": index, "pc": pc, "tid": tid, "size": size}
        if n != cap:
            cols = {k: v[:n].copy() for k, v in cols.items()}
        return Columns(cols)

    @_locked
    def operands(self, start=0, stop=None):
        """One row per operand (pre and post lists of std frames, values of key frames),
        the members of `frames dump --jsonl`: frame, pc, tid, list (0 pre, 1 post, 2 key:
        OPERAND_LISTS), kind (0 none, 1 reg, 2 mem: OPERAND_KINDS), name_id (into
        .names, -1 when not a register), address, bits, read, written, index, base,
        taint_id, value_uint, value_off/value_data (row i's value is
        value_data[value_off[i]:value_off[i+1]]) and the presence masks has_pc, has_tid,
        has_taint_id. to_pandas() gives the jsonl columns with <NA> where jsonl has null."""
        import numpy as np
        start, stop = self._range(start, stop)
        c = ffi.new("pyf_op_cols *")
        err = ffi.new("frames_error *")
        _raise_if(lib.pyf_operands(self._reader(), start, stop, c, err), err)
        try:
            flags = _col_array(c.flags, np.uint8)
            noff = _col_array(c.name_off, np.uint64)
            ndata = _col_array(c.name_data, np.uint8).tobytes()
            names = [ndata[noff[i]:noff[i + 1]].decode("utf-8", "surrogateescape")
                     for i in range(max(len(noff) - 1, 0))]
            cols = {
                "frame": _col_array(c.frame, np.uint64), "pc": _col_array(c.pc, np.uint64),
                "tid": _col_array(c.tid, np.uint64), "list": _col_array(c.list, np.uint8),
                "kind": _col_array(c.kind, np.uint8), "name_id": _col_array(c.name_id, np.int32),
                "address": _col_array(c.address, np.uint64), "bits": _col_array(c.bits, np.int32),
                "read": (flags & 1) != 0, "written": (flags & 2) != 0,
                "index": (flags & 4) != 0, "base": (flags & 8) != 0,
                "taint_id": _col_array(c.taint_id, np.uint64),
                "value_uint": _col_array(c.value_uint, np.uint64),
                "value_off": _col_array(c.value_off, np.uint64),
                "value_data": _col_array(c.value_data, np.uint8),
                "has_pc": (flags & 64) != 0, "has_tid": (flags & 16) != 0,
                "has_taint_id": (flags & 32) != 0,
            }
        finally:
            lib.pyf_op_cols_free(c)
        # value_off has one more entry than there are rows: not a row column
        table = Columns({k: v for k, v in cols.items() if k not in ("value_off", "value_data")},
                        _operands_pandas)
        table.__dict__.update(names=names, value_off=cols["value_off"],
                              value_data=cols["value_data"])
        return table

    @_locked
    def syscalls(self, start=0, stop=None):
        """syscall frames as columns: frame, pc, tid, number; the arguments of row i are
        args[args_off[i]:args_off[i+1]] (int64)."""
        import numpy as np
        start, stop = self._range(start, stop)
        c = ffi.new("pyf_sys_cols *")
        err = ffi.new("frames_error *")
        _raise_if(lib.pyf_syscalls(self._reader(), start, stop, c, err), err)
        try:
            cols = {k: _col_array(getattr(c, k), np.uint64) for k in ("frame", "pc", "tid", "number")}
            args_off = _col_array(c.args_off, np.uint64)
            args = _col_array(c.args, np.int64)
        finally:
            lib.pyf_sys_cols_free(c)
        table = Columns(cols, _syscalls_pandas)
        table.__dict__.update(args_off=args_off, args=args)
        return table

    # the query engine (frames_query.h; language in docs/query.md)
    @_locked
    def query(self, where="", vars=None, soft=(), dedup=False, limit=0, threads=1):
        """Results of a query in trace order: `vars` maps free variable names to operand
        types ("reg64", "mem*", "*"; docs/query.md), `where` is the hard predicate,
        e.g. '(and (= (v/name a) "RAX") (> (v/value a) 0x1000))'. Returns a list of
        QueryResult(frame, pc, tid, vars={name: Binding}); limit 0 means all."""
        self._reader()
        err = ffi.new("frames_error *")
        if self._fq is None:
            t = ffi.new("fq_trace **")
            _raise_if(lib.fq_trace_open_path(t, os.fsencode(self.path), ffi.NULL, err), err)
            self._fq = t[0]
        vars = dict(vars or {})
        keep = [ffi.new("char[]", _enc(x)) for x in list(vars) + list(vars.values()) + list(soft)]
        nv = len(vars)
        names = ffi.new("const char *[]", keep[:nv] or [ffi.NULL])
        types = ffi.new("const char *[]", keep[nv:2 * nv] or [ffi.NULL])
        softs = ffi.new("const char *[]", keep[2 * nv:] or [ffi.NULL])
        sink = _ResultSink()
        handle = ffi.new_handle(sink)
        n = ffi.new("uint64_t *")
        rc = lib.pyf_query(self._fq, names, types, nv, _enc(where), softs, len(soft),
                           1 if dedup else 0, limit, threads, lib.pyf_on_result, handle, n, err)
        if sink.failure is not None:
            raise sink.failure
        _raise_if(rc, err, "query")
        return list(sink)

    # names (frames_sym.h; docs/symbols.md)
    @_locked
    def symbolize(self, pc, line=True, sysroot=None):
        """The name of an instruction address ("libc.so.6!memcpy+0x12", with " at
        file:line" when known and line is true), from the trace's modload frames and
        the module files (under sysroot); None when pc is in no module. A sequence of
        pcs gives a list."""
        self._reader()
        if self._sym is None or sysroot is not None:
            if self._sym is not None:
                lib.frames_sym_close(self._sym)
                self._sym = None
            s = ffi.new("frames_sym **")
            err = ffi.new("frames_error *")
            _raise_if(lib.pyf_sym_open(s, os.fsencode(self.path),
                                       os.fsencode(sysroot) if sysroot else ffi.NULL, 0, err), err)
            self._sym = s[0]
        if not isinstance(pc, int) and hasattr(pc, "__iter__"):
            return [self.symbolize(int(p), line) for p in pc]
        buf = ffi.new("char[]", 1024)
        n = lib.pyf_symbolize(self._sym, int(pc), 1 if line else 0, buf, 1024)
        if n >= 1024:
            buf = ffi.new("char[]", n + 1)
            lib.pyf_symbolize(self._sym, int(pc), 1 if line else 0, buf, n + 1)
        return ffi.string(buf).decode("utf-8", "surrogateescape") or None

    # time travel (frames_replay.h; docs/timetravel.md)
    def _replayer(self, index):
        """The replay object, opened with the state index at `index` (None: the library's
        default, TRACE.fridx), which is built when missing or stale."""
        self._reader()
        index = None if index is None else os.fspath(index)
        if self._replay is not None and index != self._replay_index:
            lib.frames_replay_close(self._replay)
            self._replay = None
        if self._replay is None:
            r = ffi.new("frames_replay **")
            err = ffi.new("frames_error *")
            _raise_if(lib.pyf_replay_open(r, os.fsencode(self.path),
                                          os.fsencode(index) if index is not None else ffi.NULL,
                                          err), err)
            self._replay, self._replay_index = r[0], index
        return self._replay

    def _instructions_index(self, i, r):
        info = ffi.new("frames_replay_info *")
        lib.frames_replay_info_get(r, info)
        n = info.instructions
        if i < 0:
            i += n
        if not 0 <= i <= n:
            raise IndexError("instruction %d: the trace has %d" % (i, n))
        return i, n

    @_locked
    def state(self, i, index=None):
        """The state before instruction i (the i-th std_frame, from 0; negative counts from
        the end; the number of instructions is the state after the last one): a State,
        {register: int} with thread, pc and memory(addr, n). `index`: the state index
        file (default TRACE.fridx)."""
        r = self._replayer(index)
        i, _ = self._instructions_index(operator.index(i), r)
        cap = 0
        while lib.frames_replay_reg_at(r, cap) != ffi.NULL:
            cap += 1
        known = ffi.new("uint8_t[]", cap or 1)
        sizes = ffi.new("uint32_t[]", cap or 1)
        values = ffi.new("uint8_t[]", 64 * (cap or 1))
        thread, pc, has_pc = ffi.new("uint64_t *"), ffi.new("uint64_t *"), ffi.new("int *")
        err = ffi.new("frames_error *")
        _raise_if(lib.pyf_replay_state(r, i, thread, pc, has_pc, known, sizes, values, cap, err),
                  err)
        raw = ffi.buffer(values)
        regs = {}
        for k in range(cap):
            if known[k]:
                name = ffi.string(lib.frames_replay_reg_at(r, k).name).decode()
                regs[name] = int.from_bytes(raw[64 * k:64 * k + sizes[k]], "little")
        return State(self, i, thread[0], pc[0] if has_pc[0] else None, regs)

    @_locked
    def _replay_memory(self, i, addr, n):
        if n < 0:
            raise ValueError("negative length")
        r = self._replayer(self._replay_index)
        data, known = ffi.new("uint8_t[]", n or 1), ffi.new("uint8_t[]", n or 1)
        err = ffi.new("frames_error *")
        _raise_if(lib.pyf_replay_mem(r, i, addr, data, known, n, err), err)
        return Memory(ffi.buffer(data, n)[:], ffi.buffer(known, n)[:])

    @_locked
    def history(self, mem=None, reg=None, start=0, stop=None, index=None):
        """Every read and write of memory `mem` = (addr, len) or of register `reg` (any
        alias: "eax" touches rax) by instructions start..stop-1, in trace order, as
        `frames history` lists them: a list of Access(index, pc, thread, access, address,
        size, register, value). Found through the state index (`index`: its file, default
        TRACE.fridx), without decoding the whole trace."""
        if (mem is None) == (reg is None):
            raise ValueError("give one of mem=(addr, len) and reg=NAME")
        r = self._replayer(index)
        start, n = self._instructions_index(operator.index(start), r)
        stop = n if stop is None else operator.index(stop)
        stop = max(start, min(n, stop + n if stop < 0 else stop))
        q = ffi.new("frames_replay_query *")
        keep = None
        if mem is not None:
            q.what = lib.FRAMES_REPLAY_MEM_ACCESS
            q.addr, q.len = mem
        else:
            q.what = lib.FRAMES_REPLAY_REG_ACCESS
            keep = ffi.new("char[]", _enc(reg))
            q.reg = keep
        col = ffi.new("pyf_col *", {"elem": ffi.sizeof("frames_replay_access")})
        err = ffi.new("frames_error *")
        try:
            _raise_if(lib.pyf_replay_history(r, q, start, stop, col, err), err, "history")
            accs = ffi.cast("frames_replay_access *", col.data)
            out = []
            for k in range(col.n):
                a = accs[k]
                name = ffi.string(a.reg).decode("utf-8", "surrogateescape")
                out.append(Access(a.index, a.pc, a.thread, "write" if a.write else "read",
                                  None if name else a.addr, a.size, name or None,
                                  int.from_bytes(ffi.buffer(a.value, a.len), "little")
                                  if a.len else None))
            return out
        finally:
            lib.pyf_col_free(col)


def open(path):
    """Open a trace (.frames, or .frames.zst when the module has libzstd) for reading."""
    return Trace(path)


# ---- writing ----------------------------------------------------------------------------------

class Writer:
    """A trace being written (frames.create). add(frame) appends; close() (or the end of
    a with block) writes the TOC and the header's counts."""

    def __init__(self, path, arch="i386", machine=None, version=3, frames_per_toc=None,
                 toc=None, meta=None, compress=None, like=None, lenient=None):
        self.path = os.fspath(path)
        o = ffi.new("frames_writer_options *")
        keep = []
        if like is not None:
            lib.frames_writer_options_like(like._reader(), o)
            o.meta_raw.ptr, o.meta_raw.len = ffi.NULL, 0   # the meta comes from `meta`
            if meta is None:
                meta = like.meta
            lenient = True if lenient is None else lenient
        else:
            lib.frames_writer_options_default(o)
            o.arch = _arch_number(arch)
            if machine is not None:
                o.machine = machine
            o.version = version
        if like is not None and arch != "i386":
            o.arch = _arch_number(arch)
        if like is not None and machine is not None:
            o.machine = machine
        if frames_per_toc is not None:
            o.frames_per_toc = frames_per_toc
        if toc is not None:
            if toc not in _TOC_NAMES:
                raise ValueError("unknown TOC convention %r" % (toc,))
            o.toc = _TOC_NAMES[toc]
        if lenient:
            o.encode_flags |= lib.FRAMES_ENC_LENIENT
        if compress is None:
            compress = self.path.endswith(".zst")
        err = ffi.new("frames_error *")
        w = ffi.new("frames_writer **")
        _raise_if(lib.pyf_writer_open(w, os.fsencode(self.path), o, _c_meta(meta, keep),
                                      1 if compress else 0, err), err, self.path)
        self._w = w[0]

    def add(self, frame):
        """Append a frame object (StdFrame, SyscallFrame, ...)."""
        if self._w is None:
            raise ValueError("write to a closed trace")
        keep = []
        f = _c_frame(frame, keep)
        rc = lib.frames_writer_add(self._w, f)
        if rc < 0:
            raise _error(lib.frames_writer_error(self._w), rc)

    def extend(self, frames):
        for f in frames:
            self.add(f)

    def __len__(self):
        return 0 if self._w is None else int(lib.frames_writer_count(self._w))

    def close(self):
        """Finish the trace (TOC, header counts) and close the file."""
        if self._w is None:
            return
        w, self._w = self._w, None
        rc = lib.frames_writer_finish(w)
        failure = _error(lib.frames_writer_error(w), rc, self.path) if rc < 0 else None
        rc = lib.frames_writer_close(w)
        if failure is None and rc < 0:
            failure = FramesError("%s: cannot close the trace" % self.path, rc)
        if failure is not None:
            raise failure

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_w", None) is not None:
            self.close()


def create(path, arch="i386", machine=None, version=3, frames_per_toc=None, toc=None,
           meta=None, compress=None, like=None, lenient=None):
    """Create a trace for writing: arch by name ("i386", "arm", "aarch64", ...) or number,
    machine (BFD machine number: 64 for x86-64; default: the library's, i386), version 2
    or 3, frames_per_toc (m, default 10000), toc ("libtrace", "ceil", "tracewrap",
    "ceil-zero"), meta (a dict as Trace.meta gives, or None), compress (default: when the
    name ends in .zst). like=trace takes the container settings and meta of an open
    trace, as `frames cat` does, and writes frames as read (lenient=True) so that a copy
    is byte-identical; otherwise frames BAP's reader would reject raise FramesError."""
    return Writer(path, arch, machine, version, frames_per_toc, toc, meta, compress, like, lenient)

