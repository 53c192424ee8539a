# SPDX-License-Identifier: BSD-3-Clause
import os
import shutil
import subprocess
import tempfile

import pytest

# builds and runs the inbox under ThreadSanitizer: .ci/run's integration stage (pytest -m heavy)
pytestmark = pytest.mark.heavy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tsan_available():
    cc = shutil.which(os.environ.get("CC", "gcc"))
    if not cc:
        return False
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.c")
        open(src, "w").write("int main(void){return 0;}\n")
        r = subprocess.run([cc, "-fsanitize=thread", src, "-o", os.path.join(d, "t")], capture_output=True)
        return r.returncode == 0


@pytest.mark.skipif(not _tsan_available(), reason="the C compiler has no ThreadSanitizer runtime")
def test_inbox_is_clean_under_thread_sanitizer():
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "tsan_queue.sh"), "50000"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ThreadSanitizer" not in r.stderr
    assert "lost 0 duplicated 0 reordered 0" in r.stdout and r.stdout.strip().endswith("OK")
