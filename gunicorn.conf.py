"""gunicorn reads this file from the working directory: a server started with gunicorn runs FactLab's
production settings unless told otherwise (FACTLAB_PRODUCTION=0, e.g. the benchmarks on plain HTTP).

The master loads the application and everything a request may need (every view module, the spaCy
pipelines) before it forks its workers, so no request pays seconds of loading (the first BUMP submit of a
fresh worker once did, and passed the worker timeout), a worker started to replace a killed one serves at
once, and the workers share the loaded pipelines' memory. What it loaded is then frozen out of the garbage
collector's reach (``factlab.warm.freeze_loaded_heap``): no worker walks it again.
"""
import os

os.environ.setdefault("FACTLAB_PRODUCTION", "1")

preload_app = True


def on_starting(server):
    """Runs in the master after the application is loaded (``preload_app``), before it listens (a client is
    refused until the server can answer, instead of waiting on a socket) and before any worker forks."""
    from factlab.warm import freeze_loaded_heap, load_for_requests

    load_for_requests()
    freeze_loaded_heap()
    server.log.info("FactLab: views and spaCy pipelines loaded before listening and forking workers")
