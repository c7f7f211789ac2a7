"""Builds the `tad` Python package: the C extension tad._tad over libtad (include/tad.h).

Where libtad comes from:
  TAD_INCLUDE_DIR  directory holding tad.h      (default: <repo>/include)
  TAD_LIB_DIR      directory holding libtad.so  (default: the newest <repo>/build*/libtad.so)
  TAD_SOURCE_DIR   the tad repository, for src/runtime/python/tad_trace.py (default: <repo>)

libtad is copied into the package next to the extension, whose RPATH is $ORIGIN: an installed or
carried package finds it without LD_LIBRARY_PATH. The extension uses the stable ABI (Python >= 3.11),
so one build loads in python3.11 and python3.12.

No network is needed: `python3 -m pip install --no-build-isolation ./bindings/python`.
"""

import glob
import os
import re
import shutil

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SOURCE_DIR = os.environ.get("TAD_SOURCE_DIR") or REPO
INCLUDE_DIR = os.environ.get("TAD_INCLUDE_DIR") or os.path.join(SOURCE_DIR, "include")


def header_version():
    """The package version is libtad's, read from tad.h so that it has one source."""
    with open(os.path.join(INCLUDE_DIR, "tad.h"), encoding="utf-8") as f:
        text = f.read()
    parts = [re.search(rf"#define TAD_VERSION_{p}\s+(\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise SystemExit(f"{INCLUDE_DIR}/tad.h has no TAD_VERSION_MAJOR/MINOR/PATCH")
    return ".".join(m.group(1) for m in parts)


def find_lib_dir():
    env = os.environ.get("TAD_LIB_DIR")
    if env:
        if not os.path.exists(os.path.join(env, "libtad.so")):
            raise SystemExit(f"TAD_LIB_DIR={env} holds no libtad.so")
        return env
    built = glob.glob(os.path.join(SOURCE_DIR, "build*", "libtad.so"))
    if not built:
        raise SystemExit(f"no libtad.so under {SOURCE_DIR}/build*/: build the C library "
                         "(cmake --build <dir> --target tad) and set TAD_LIB_DIR=<dir>")
    # Several build directories: the one built last is the one being worked on.
    return os.path.dirname(max(built, key=os.path.getmtime))


def shared_object_name(lib_dir):
    """The file name the extension will ask the dynamic loader for: libtad's SONAME.

    CMake builds libtad.so -> libtad.so.<SOVERSION> -> libtad.so.<version>; the linker records the
    SONAME libtad.so.<SOVERSION> (SOVERSION is 0.<minor> while the version is 0.x: docs/abi.md), the
    name libtad.so links to. A build directory may keep the links of an older SOVERSION beside it.
    Without links: the one libtad.so.<SOVERSION> there (libtad.so.<version> has three numbers); a
    directory with only libtad.so has no SONAME to honour.
    """
    link = os.path.join(lib_dir, "libtad.so")
    if os.path.islink(link):
        return os.path.basename(os.readlink(link))
    versioned = [n for n in os.listdir(lib_dir) if re.fullmatch(r"libtad\.so\.\d+(\.\d+)?", n)]
    if len(versioned) > 1:
        raise SystemExit(f"{lib_dir} holds several libtad SONAMEs: {sorted(versioned)}")
    return versioned[0] if versioned else "libtad.so"


# Runtime modules @tad.autodiff runs in the user's process, copied into the package under these names.
SHARED = {"tad_trace.py": "_trace.py",            # the tracer
          "tad_dotcompare.py": "_dotcompare.py"}  # the dot-product test's tolerances and rel_err


class BuildPy(build_py):
    """Copies two things from the runtime (one source, shared with the worker):
    - the modules of SHARED: tad_trace.py as tad/_trace.py, the tracer @tad.autodiff runs in the
      user's process, and tad_dotcompare.py as tad/_dotcompare.py, its first-use check's comparison;
    - the worker's scripts as tad/python/, where libtad looks beside itself (runtime/python_dir.cpp),
      so an installed or carried package needs neither the source tree nor TAD_PYTHON_DIR.
    """

    def run(self):
        super().run()
        runtime = os.path.join(SOURCE_DIR, "src", "runtime", "python")
        package = os.path.join(self.build_lib, "tad")
        self.mkpath(package)
        for source, target in SHARED.items():
            if not os.path.isfile(os.path.join(runtime, source)):
                raise SystemExit(f"{runtime}/{source} not found: set TAD_SOURCE_DIR to the tad "
                                 "repository")
            self.copy_file(os.path.join(runtime, source), os.path.join(package, target))
        for directory, _, files in os.walk(runtime):
            target = os.path.join(package, "python", os.path.relpath(directory, runtime))
            for name in files:
                if name.endswith(".py"):
                    self.mkpath(target)
                    self.copy_file(os.path.join(directory, name), os.path.join(target, name))


class BuildExt(build_ext):
    def run(self):
        lib_dir = find_lib_dir()
        for ext in self.extensions:
            ext.library_dirs.append(lib_dir)
        super().run()
        # Bundle libtad under its SONAME beside the extension (RPATH $ORIGIN finds it there).
        name = shared_object_name(lib_dir)
        for ext in self.extensions:
            target_dir = os.path.dirname(self.get_ext_fullpath(ext.name))
            self.mkpath(target_dir)
            shutil.copyfile(os.path.join(lib_dir, name), os.path.join(target_dir, name))
            # Retrieval's FAISS plugin, which libtad looks for beside itself (docs/retrieval.md).
            plugin = os.path.join(lib_dir, "libtad_faiss.so")
            if os.path.exists(plugin):
                shutil.copyfile(plugin, os.path.join(target_dir, "libtad_faiss.so"))


setup(
    name="tad",
    version=header_version(),
    description="Python binding of tad (Triton AutoDiff): backward kernels for Triton forwards",
    python_requires=">=3.11",
    packages=["tad"],
    ext_modules=[Extension(
        "tad._tad",
        sources=["_tad.c"],
        include_dirs=[INCLUDE_DIR],
        libraries=["tad"],
        runtime_library_dirs=["$ORIGIN"],
        py_limited_api=True,  # _tad.c defines Py_LIMITED_API itself
    )],
    cmdclass={"build_py": BuildPy, "build_ext": BuildExt},
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
