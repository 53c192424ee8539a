"""tuning-6's exp.py with this folder's patches (tuning-6's plus ``freshval``).
The trainers now do what ``freshval`` patched in; applied again it recomputes the same values."""
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)          # this folder's patches.py before tuning-6's
runpy.run_path(os.path.join(HERE, "..", "tuning-6", "exp.py"), run_name="__main__")
