"""The assignment keeps only what every protocol shares: BUMP's checkpoint code and FRANK's reading-check result
now live in their apps' own tables. The protocol apps copy the values over before this runs (their migrations
name this one in ``run_before``, so this app's migrations name no protocol)."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("annotate", "0012_edit_moves_to_bump"),
    ]

    operations = [
        migrations.RemoveField(model_name="assignment", name="checkpoint_code"),
        migrations.RemoveField(model_name="assignment", name="entity_correct"),
    ]
