# SPDX-License-Identifier: BSD-3-Clause
"""Compare two Cython-generated C files for code changes, ignoring what a
move between source files changes (line markers and source excerpts,
__PYX_ERR positions, the file table, code objects' first lines, the string
tables and the compressed docstrings).  Used to show that a layout-only
change (e.g. loop.pyx split into included .pxi files) left the compiled
code as it was.

    python scripts/c_code_diff.py OLD/loop.c seer_runtime/loop.c

Prints the number of differing lines beyond that metadata (0: the same
code) and the first of them; exits 1 when there are any.
"""

import difflib
import re
import sys

META = ("descr = {", "__Pyx_PyCode_New(", "cstring[]", "bytes[]", "str_length_index",
        "__pyx_string_tab[i]", "seer_runtime/_", "__pyx_kp_u_seer_runtime_",
        "PyObject *__pyx_string_tab[", "DecompressString", "first_line", "stringtab +",
        "bytes_length_index[", "i < ", "i >= ")


def normalised(path):
    s = open(path).read()
    s = re.sub(r"/\*.*?\*/", "", s, flags=re.S)
    s = re.sub(r"__PYX_ERR\(\d+, \d+, ", "__PYX_ERR(F, L, ", s)
    s = re.sub(r"__pyx_lineno = \d+", "__pyx_lineno = L", s)
    s = re.sub(r"__pyx_filename = __pyx_f\[\d+\]", "__pyx_filename = F", s)
    s = re.sub(r"__pyx_string_tab\[\d+\]", "__pyx_string_tab[N]", s)
    s = re.sub(r"\n\s*\n+", "\n", s)
    return s.split("\n")


def main(old, new):
    diff = [line for line in difflib.unified_diff(normalised(old), normalised(new), lineterm="", n=0)
            if not line.startswith(("---", "+++", "@@")) and not any(m in line for m in META)]
    print(f"{len(diff)} differing line(s) beyond file and line metadata")
    print("\n".join(diff[:20]))
    return 1 if diff else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
