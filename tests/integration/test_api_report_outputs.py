"""Paper tables and figures of a report over the API, on the AggreFact sample (tests/data/aggrefact)."""
from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from django.core.cache import cache

from annotate.models import Campaign
from annotate.services.imports import import_dataset
from tests.test_api_fixtures import *

pytestmark = pytest.mark.django_db
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "aggrefact" / "aggrefact_sample.csv"
URL = "/api/campaigns/aggrefact-api/report/outputs/"


@pytest.fixture
def aggrefact_campaign(researcher):
    cache.clear()
    import_dataset("aggrefact", [SAMPLE], campaign_slug="aggrefact-api")
    campaign = Campaign.objects.get(slug="aggrefact-api")
    campaign.researchers.add(researcher)
    return campaign


def test_outputs_are_listed_and_downloaded(aggrefact_campaign, researcher_client):
    listing = researcher_client.get(f"{URL}?kendall=true")
    assert listing.status_code == 200, listing.content
    names = listing.json()
    assert {"correlations.csv", "correlations.tex", "balanced_accuracy.csv", "system_level.tex"} <= set(names["tables"])
    assert {"roc_xsum.svg", "roc_cnndm.png", "scatter_DAE.svg", "error_types.svg"} - set(names["figures"]) == {"error_types.svg"}  # no error types in a binary benchmark

    report = researcher_client.get("/api/campaigns/aggrefact-api/report/?kendall=true").json()
    table = researcher_client.get(f"{URL}correlations.csv?kendall=true")
    assert table.status_code == 200 and table["Content-Type"].startswith("text/csv")
    frame = pd.read_csv(io.StringIO(table.content.decode()), header=[0, 1], index_col=0)
    assert frame.loc["DAE", ("All data", "Kendall")] == pytest.approx(report["correlations"]["DAE"]["kendall"], abs=5e-4)
    assert {"All data", "CNN/DM", "XSum"} == set(frame.columns.get_level_values(0))
    bacc = pd.read_csv(io.StringIO(researcher_client.get(f"{URL}balanced_accuracy.csv").content.decode()), index_col=0)
    assert bacc.loc["DAE", "XSum (own threshold)"] == pytest.approx(report["balanced_accuracy"]["DAE"]["per_dataset"]["xsum"]["balanced_accuracy"], abs=5e-4)
    latex = researcher_client.get(f"{URL}balanced_accuracy.tex")
    assert latex["Content-Type"].startswith("application/x-latex") and b"\\begin{tabular}" in latex.content
    png = researcher_client.get(f"{URL}roc_xsum.png")
    assert png.status_code == 200 and png["Content-Type"] == "image/png" and png.content[:4] == b"\x89PNG"
    svg = researcher_client.get(f"{URL}scatter_DAE.svg")
    assert svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content and b"DAE against human factuality" in svg.content

    assert researcher_client.get(f"{URL}nothing.csv").status_code == 404
    assert researcher_client.get(f"{URL}error_types.svg").status_code == 404
    wrong = researcher_client.get(f"{URL}correlations.docx")
    assert wrong.status_code == 400 and ".csv or .tex" in wrong.json()["detail"]
    assert researcher_client.get(f"{URL}?split=train").status_code == 400


def test_outputs_need_a_reader_of_the_campaign(aggrefact_campaign, annotator_client, client):
    assert client.get(URL).status_code in (401, 403)
    assert annotator_client.get(URL).status_code == 403
