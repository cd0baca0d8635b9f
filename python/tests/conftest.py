"""Shared fixtures: the frames command (FRAMES_BIN), the shared vectors (FRAMES_SHARED),
and running the command. Expectations come from the command (the C library's own
printers and writers) and from hand-made traces, never from the module under test."""
import glob
import json
import os
import subprocess

import pytest

ROOT = os.environ.get("FRAMES_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SHARED = os.environ.get("FRAMES_SHARED") or os.path.join(ROOT, "..", "shared")
BIN = os.environ.get("FRAMES_BIN") or os.path.join(ROOT, "build", "frames")
ALL_VECTORS = sorted(glob.glob(os.path.join(SHARED, "vectors", "frames", "*.frames")))


def _command_reads(path):
    return subprocess.run([BIN, "info", path], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=60).returncode == 0


# the vectors the command reads, and those it refuses (a 0-byte file: the upstream writer
# asserted before writing anything), which the module must refuse as well
VECTORS = [v for v in ALL_VECTORS if _command_reads(v)] if os.access(BIN, os.X_OK) else []
UNREADABLE = [v for v in ALL_VECTORS if v not in VECTORS]


def vector_id(path):
    return os.path.basename(path)[:-len(".frames")]


def run(*args, check=True):
    """The frames command's standard output (bytes); LANG does not matter to it."""
    p = subprocess.run([BIN] + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=dict(os.environ, LC_ALL="C"), timeout=120)
    if check and p.returncode != 0:
        raise AssertionError("frames %s: exit %d: %s" % (" ".join(map(str, args)), p.returncode,
                                                          p.stderr.decode(errors="replace")))
    return p.stdout


def json_lines(*args):
    return [json.loads(l) for l in run(*args).decode().splitlines() if l.strip()]


def pytest_generate_tests(metafunc):
    if "vector" in metafunc.fixturenames:
        metafunc.parametrize("vector", VECTORS, ids=[vector_id(v) for v in VECTORS])


@pytest.fixture(scope="session", autouse=True)
def _have_inputs():
    if not ALL_VECTORS:
        pytest.fail("no vectors under %s (set FRAMES_SHARED)" % SHARED)
    if not os.access(BIN, os.X_OK):
        pytest.fail("no frames command at %s (set FRAMES_BIN)" % BIN)
