"""gunicorn reads this file from the working directory: a server started with gunicorn runs FactLab's
production settings unless told otherwise (FACTLAB_PRODUCTION=0, e.g. the benchmarks on plain HTTP)."""
import os

os.environ.setdefault("FACTLAB_PRODUCTION", "1")
