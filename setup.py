# SPDX-License-Identifier: BSD-3-Clause
"""Build: the extension list, the OpenMP probe and the Cython directives.

Environment:
  SEER_NO_OPENMP=1       build serially even where OpenMP works
  SEER_FAIL_NO_OPENMP=1  fail the build if OpenMP does not work (CI sets it)
  SEER_CYTHON_DEBUG=1    turn Cython's bounds/wraparound/init checks back on
  SEER_CYTHON_ANNOTATE=1 write cython -a annotation HTML beside each .pyx
"""

import glob
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

OMP_TEST = textwrap.dedent("""
    #include <omp.h>
    int main(void) {
        int n = 0;
        #pragma omp parallel reduction(+:n)
        n += 1;
        return n > 0 && omp_get_max_threads() > 0 ? 0 : 1;
    }
""")


def _flag(name):
    return os.environ.get(name, "") not in ("", "0")


def openmp_flags():
    """Compile and link a tiny omp.h program; return (cflags, ldflags) or None."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    cc = cc.split()
    if sys.platform == "darwin":
        # Apple clang: OpenMP only via libomp and -Xpreprocessor (libomp's
        # include and library paths come from CPPFLAGS/LDFLAGS, e.g. Homebrew's).
        cflags, ldflags = ["-Xpreprocessor", "-fopenmp"], ["-lomp"]
    else:
        cflags, ldflags = ["-fopenmp"], ["-fopenmp"]
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "omp_probe.c")
        with open(src, "w") as f:
            f.write(OMP_TEST)
        exe = os.path.join(d, "omp_probe")
        try:
            r = subprocess.run(cc + cflags + [src, "-o", exe] + ldflags,
                               capture_output=True, text=True, timeout=120)
            ok = r.returncode == 0 and subprocess.run([exe], timeout=60).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
    return (cflags, ldflags) if ok else None


def build_flags():
    base = ["-O3", "-ffp-contract=off", "-fno-strict-aliasing", "-Wno-unused-function",
            "-Wno-unreachable-code", "-Wno-unused-variable"]
    if _flag("SEER_NO_OPENMP"):
        print("seer: SEER_NO_OPENMP=1, building without OpenMP (serial)", file=sys.stderr)
        return base, [], False
    omp = openmp_flags()
    if omp is None:
        msg = ("seer: the C compiler cannot build OpenMP programs; building SEER serially "
               "(num_threads > 1 will run on one thread). Install an OpenMP runtime "
               "(libgomp / libomp) to get parallel runs.")
        if _flag("SEER_FAIL_NO_OPENMP"):
            raise SystemExit(msg + " SEER_FAIL_NO_OPENMP=1 makes this fatal.")
        print("WARNING " + msg, file=sys.stderr)
        return base, [], False
    return base + omp[0], omp[1], True


CFLAGS, LDFLAGS, HAVE_OMP = build_flags()

MODULES = [
    "seer_runtime.queue",
    "seer_runtime.scenario",
    "seer_runtime.loop",
    "seer_runtime.models.phold._model",
    "seer_runtime.models._faulty",
    "seer_envs._snapbytes",
] + sorted(  # each scenario folder's Cython modules: a new scenario edits nothing here
    p[:-len(".pyx")].replace(os.sep, ".") for p in glob.glob(os.path.join("seer_envs", "*", "*.pyx")))

extensions = [
    Extension(name, [name.replace(".", "/") + ".pyx"],
              include_dirs=["seer_runtime"],
              extra_compile_args=CFLAGS, extra_link_args=LDFLAGS)
    for name in MODULES
]

debug = _flag("SEER_CYTHON_DEBUG")
directives = {
    "language_level": 3,
    "boundscheck": debug,
    "wraparound": debug,
    "initializedcheck": debug,
    "cdivision": not debug,
    "embedsignature": True,
}

# seer-torchrl-names.pth goes beside the packages in site-packages, in a wheel
# and in an editable install alike: BenchMARL 1.5.2 imports TorchRL's collector
# by its pre-0.14 name, and only a .pth runs before a script's first import
# (seer_envs/integrations/_torchrl_names.py says what its one line does).
PTH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seer-torchrl-names.pth")


class BuildPyWithPth(build_py):
    def run(self):
        super().run()
        self.copy_file(PTH, os.path.join(self.build_lib, os.path.basename(PTH)), preserve_mode=0)


class EditableWheelWithPth(editable_wheel):
    def _install_namespaces(self, installation_dir, pth_prefix):
        super()._install_namespaces(installation_dir, pth_prefix)
        shutil.copy(PTH, os.path.join(installation_dir, os.path.basename(PTH)))


setup(
    ext_modules=cythonize(extensions, compiler_directives=directives,
                          annotate=_flag("SEER_CYTHON_ANNOTATE"), nthreads=0),
    cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth},
)
