"""Can a script that reads only the page tell a campaign's gold apart? Best balanced scores of cheap predictors.

Predictors computed from what a task page shows (word overlap of a sentence with its closest article sentence,
sentence length and position, summary length, data set; embedding overlap is left out, since no model
weights are shipped or downloaded), each as its best one-threshold rule, plus a cross-validated logistic
regression over all of them, trained on the campaign's gold (``control_items.gold_predictability``, the
numbers the control page shows). Each prints its best balanced score *pooled* (how the quality score was
computed before) and *within strata* of data set and overlap band (how workers are scored now): 0.5 is
chance; the control page warns above 0.6.

    DATABASE_URL=... .venv/bin/python -m benchmarks.control_predictability --campaign SLUG
    DATABASE_URL=... .venv/bin/python -m benchmarks.control_predictability [--frank ../shared/data/frank] [--documents N]

With ``--campaign`` it reads that campaign of the configured database; otherwise it imports FRANK (all of it,
or ``--documents`` articles over both data sets) into a throwaway database of its own and reads its gold.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def report(campaign) -> str:
    from annotate.services.control_items import (
        PREDICTABILITY_WARNING,
        gold_predictability,
    )

    gold_predictability(campaign)  # the first call also stores the gold's overlaps and imports scikit-learn
    started = time.process_time()
    result = gold_predictability(campaign)
    seconds = time.process_time() - started
    lines = [f"{result.gold} gold sentences in {campaign.slug}; the table took {seconds:.2f} s of CPU (the control page's cold view)",
             f"{'predictor':<40} {'pooled':>7} {'strata':>7}"]
    for predictor in result.predictors:
        pooled = "-" if predictor.pooled is None else f"{predictor.pooled:.3f}"
        stratified = "-" if predictor.stratified is None else f"{predictor.stratified:.3f}"
        lines.append(f"{predictor.name:<40} {pooled:>7} {stratified:>7}")
    if result.best is not None:
        lines.append(f"best pooled {result.best_pooled.pooled:.3f} ({result.best_pooled.name}); "
                     f"best within strata {result.best.stratified:.3f} ({result.best.name})"
                     + (f": above {PREDICTABILITY_WARNING}, the page gives the gold away" if result.warning else ""))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaign", help="a campaign of the configured database (else FRANK is imported into a throwaway one)")
    parser.add_argument("--frank", type=Path, default=REPO_ROOT.parent / "shared" / "data" / "frank")
    parser.add_argument("--documents", type=int, default=0, help="FRANK articles to import (0: all)")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
    import django

    django.setup()
    from annotate.models import Campaign

    if args.campaign:
        print(report(Campaign.objects.get(slug=args.campaign)))
        return
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_test_environment

    from annotate.services.imports import import_dataset
    from benchmarks.adversary_bot import frank_subset

    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = False
    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_control_predictability"
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with tempfile.TemporaryDirectory(prefix="factlab-predictability-") as tmp:
            source = frank_subset(args.frank, Path(tmp), args.documents) if args.documents else args.frank
            import_dataset("frank", [source], campaign_slug="predictability-frank")
        print(report(Campaign.objects.get(slug="predictability-frank")))
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
