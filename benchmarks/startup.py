"""Start-up time of ``manage.py`` commands, and which heavy libraries a command loads.

Each command runs ``--runs`` times in a fresh interpreter; printed are the median wall-clock and CPU
(user + system) seconds, next to the baseline of the same run: an interpreter that only sets up Django.
CPU time is the figure a shared machine does not inflate. Then, for ``manage.py check``, whether torch,
transformers, spaCy, matplotlib, scikit-learn or pandas were imported (they must not be).

Last, what a serving process loads before it serves (``factlab/warm.py``): gunicorn's master
(``load_for_requests``) and each Celery worker (``load_for_jobs``), in a fresh interpreter after
``django.setup()``: median CPU seconds of the loading alone (spaCy's import included), peak memory, how many
times a spaCy model was loaded from disk and whether torch was imported.

Usage::

    .venv/bin/python benchmarks/startup.py --runs 5
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ["torch", "transformers", "spacy", "matplotlib", "sklearn", "pandas", "scipy", "statsmodels", "pyarrow"]
COMMANDS = [["check"], ["help", "import_dataset"], ["showmigrations", "annotate"]]


def timed(argv: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
    if not os.environ.get("DJANGO_SECRET_KEY"):
        os.environ.setdefault("DJANGO_DEBUG", "1")  # development settings: they need no secret key
    python = sys.executable
    rows = [("baseline: django.setup() only", [python, "-c", "import django; django.setup()"])]
    rows += [(f"manage.py {' '.join(c)}", [python, "manage.py", *c]) for c in COMMANDS]
    for label, argv in rows:
        runs = [timed(argv) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        goal = "" if label.startswith("baseline") else f"  (target <= 1.5 s: {'met' if wall <= 1.5 else 'MISSED'} on wall, {'met' if cpu <= 1.5 else 'MISSED'} on CPU)"
        print(f"{label:<36} median wall {wall:5.2f} s  cpu {cpu:5.2f} s{goal}", flush=True)
    probe = (
        "import sys, django; django.setup(); from django.core.management import call_command; call_command('check', verbosity=0); "
        f"print(chr(10) + (' '.join(m for m in {HEAVY!r} if m in sys.modules) or 'none'))"
    )
    loaded = subprocess.run([python, "-c", probe], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    print(f"heavy libraries loaded by manage.py check: {loaded}")
    for loader in ("load_for_requests", "load_for_jobs"):
        runs = [_serving_start(python, loader) for _ in range(args.runs)]
        cpu = statistics.median(r["cpu"] for r in runs)
        rss = statistics.median(r["rss_mb"] for r in runs)
        print(f"serving start, {loader:<18} median cpu {cpu:5.2f} s  peak memory {rss:4.0f} MB  "
              f"spaCy models loaded from disk: {runs[0]['model_loads']}  torch imported: {'yes' if runs[0]['torch'] else 'no'}",
              flush=True)


SERVING_PROBE = """
import json, resource, time
import sys
import django
django.setup()
started = time.process_time()
try:  # as the serving process imports it (without torch where no pipeline needs it)
    from annotate.spacy_pipeline import import_spacy
    spacy = import_spacy()
except ImportError:  # a release before that loader
    import spacy
loads = []
real_load = spacy.load
spacy.load = lambda *args, **kwargs: loads.append(args) or real_load(*args, **kwargs)
from factlab import warm
getattr(warm, {loader!r})()
print(json.dumps({{"cpu": time.process_time() - started, "model_loads": len(loads), "torch": "torch" in sys.modules,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def _serving_start(python: str, loader: str) -> dict:
    """One fresh interpreter's run of ``factlab.warm.<loader>``, spaCy's import included."""
    out = subprocess.run([python, "-c", SERVING_PROBE.format(loader=loader)], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
