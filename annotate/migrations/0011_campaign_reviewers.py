from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    """A campaign's own reviewers, invited for it from its people page (the "reviewers" group reviews every campaign)."""

    dependencies = [("annotate", "0010_import_waits_for_confirmation"), migrations.swappable_dependency(settings.AUTH_USER_MODEL)]

    operations = [
        migrations.AddField(
            model_name="campaign", name="reviewers",
            field=models.ManyToManyField(blank=True, related_name="reviewed_campaigns", to=settings.AUTH_USER_MODEL),
        ),
    ]
