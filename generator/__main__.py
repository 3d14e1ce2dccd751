import os
import sys

from generator.cli import main

status = main()
# Everything is written and closed by now. The interpreter's own shutdown would free
# SymPy's caches and expression trees object by object: about 0.1 s of a 0.8 s run
# (benchmarks/latency.py), for nothing. So flush and leave without it.
for stream in (sys.stdout, sys.stderr):
    try:
        stream.flush()
    except (OSError, ValueError):  # a closed pipe (`| head -1`) or stream
        pass
os._exit(status)
