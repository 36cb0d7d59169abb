#!/usr/bin/env python3
"""Agreement of this set's second judge (second/labels.tsv) with qrels/test.tsv: the releases
set's script (eval/retrieval/releases/second/agreement.py), run on this folder.

Usage (from the repository root): python3 eval/retrieval/matplotlib/second/agreement.py
"""
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.argv = [sys.argv[0], str(HERE.parent)]
runpy.run_path(str(HERE.parents[1] / "releases/second/agreement.py"), run_name="__main__")
