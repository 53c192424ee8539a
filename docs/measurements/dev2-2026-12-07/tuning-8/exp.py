"""tuning-6's exp.py with this folder's patches (tuning-6's, tuning-7's and ``entdecay``)."""
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)          # this folder's patches.py before tuning-6's
runpy.run_path(os.path.join(HERE, "..", "tuning-6", "exp.py"), run_name="__main__")
