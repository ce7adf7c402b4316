"""Gold labels and traps record the word overlap of their sentence with the closest article sentence, so that
the quality score can be balanced within overlap bands (computed by the services when a label or trap is set;
rows from before stay unknown, a band of their own)."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0003_public_labels"),
    ]

    operations = [
        migrations.AddField(
            model_name="goldlabel",
            name="overlap",
            field=models.FloatField(blank=True, help_text="Word overlap with the closest article sentence (0 to 1).", null=True),
        ),
        migrations.AddField(
            model_name="trap",
            name="overlap",
            field=models.FloatField(blank=True, help_text="Word overlap with the closest article sentence (0 to 1).", null=True),
        ),
    ]
