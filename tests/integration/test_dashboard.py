"""The campaign dashboard: tables and client-rendered chart specs for staff and granted researchers, refused to others."""
import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.urls import reverse

from annotate.roles import make_researcher


def test_dashboard_renders_frank_figures_and_enforces_roles(client, frank_benchmark):
    """On FRANK imported with the platform's ROUGE and BLEU of every summary (``frank_benchmark``), renamed."""
    cache.clear()
    campaign = frank_benchmark
    campaign.slug = "frank-dash"
    campaign.save(update_fields=["slug"])
    url = reverse("metrics_service:dashboard", args=[campaign.slug])
    assert url == "/campaigns/frank-dash/dashboard/"

    anonymous = client.get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]

    users = get_user_model().objects
    client.force_login(users.create_user("annotator"))
    assert client.get(url).status_code == 404
    # No existence oracle: a campaign the user may not see answers like one that does not exist.
    assert client.get(reverse("metrics_service:dashboard", args=["no-such-campaign"])).status_code == 404

    researcher = users.create_user("researcher")
    make_researcher(researcher)
    client.force_login(researcher)
    assert client.get(url).status_code == 404  # not granted this campaign
    campaign.researchers.add(researcher)
    response = client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<svg" not in html and len(html) < 200_000  # small JSON specs drawn by the browser, no inline SVG
    charts = response.context["charts"]
    assert charts["errors"]["type"] == "bars" and charts["scatter"]["type"] == "scatter"
    assert charts["williams"]["rows"] == charts["williams"]["columns"] and "rouge1" in charts["williams"]["rows"]
    assert charts["ablation"]["type"] == "heatmap" and 'id="dashboard-charts"' in html
    assert "rouge1" in html and "2246 summaries" in html
    assert 'id="balanced-accuracy"' in html and "single threshold" in html and "Spearman of the residuals" in html
    # Readable labels: full category names beside the codes, no repeated word in the captions.
    assert "Relation error (RelE)" in [series["name"] for series in charts["errors"]["series"]]
    assert "Entity error (EntE)" in charts["ablation"]["columns"] and "EntE" not in charts["ablation"]["columns"]
    assert charts["scatter"]["y_label"] == "human factuality"
    assert "Spearman Spearman" not in html and "Spearman Spearman" not in client.get(url, {"spearman": "ranks"}).content.decode()
    assert response.context["tables"]["correlations"][0]["pearson_ci"].startswith("[")
    assert client.get(url, {"fingerprint": "1"}).json()["fingerprint"] == response.context["fingerprint"]

    client.force_login(users.create_user("staff", is_staff=True))
    response = client.get(url, {"split": "test", "dataset": "xsum", "metric": "bleu", "partial": "0"})
    assert response.status_code == 200 and response.context["charts"]["scatter"]["x_label"] == "bleu"
    assert response.context["metric"] == "bleu" and response.context["report"]["options"]["partial"] is False
    assert client.get(url, {"split": "train"}).status_code == 400


@pytest.mark.django_db
def test_dashboard_shows_how_certain_the_sentence_labels_are(client):
    from tests.factories import make_judged_campaign

    cache.clear()
    campaign, _, units = make_judged_campaign(4)
    client.force_login(get_user_model().objects.create_user("staff-labels", is_staff=True))
    response = client.get(reverse("metrics_service:dashboard", args=[campaign.slug]))
    html = response.content.decode()
    rows = {row["method"]: row for row in response.context["tables"]["labels"]}
    assert 'id="label-certainty-table"' in html and {"majority", "dawid_skene", "glad"} <= set(rows)
    assert all(row["sentences"] == len(units) for row in rows.values())
    assert response.context["tables"]["uncertain_below"] == "0.9"
    # Two-to-one splits: the majority's posterior (the share agreeing) is 2/3 there, so they count as uncertain.
    assert float(rows["majority"]["mean_posterior"]) < 0.9 and rows["majority"]["uncertain"] > 0
    assert all(0.5 <= float(row["mean_posterior"]) <= 1.0 for row in rows.values())
    assert "How certain the sentence labels are" in html
