"""pip install ./python (offline: add --no-build-isolation; needs cffi, numpy, setuptools
and a C compiler, plus libzstd-dev / libdw-dev for the optional parts). The C side is
built from the headers in the folder above (FRAMES_ROOT overrides): see frames_build.py."""
import os
import re

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("FRAMES_ROOT") or os.path.dirname(HERE)
with open(os.path.join(ROOT, "frames.h")) as f:
    VERSION = re.search(r'#define FRAMES_LIB_VERSION "([^"]+)"', f.read()).group(1)

setup(
    name="frames",
    version=VERSION,
    description="Read and write BAP frames execution traces (frames.h through cffi)",
    license="MIT",
    packages=["frames"],
    python_requires=">=3.7",
    setup_requires=["cffi>=1.12"],
    install_requires=["cffi>=1.12", "numpy"],
    cffi_modules=["frames_build.py:ffibuilder"],
    zip_safe=False,
)
