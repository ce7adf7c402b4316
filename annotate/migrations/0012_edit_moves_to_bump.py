"""BUMP's Edit model now belongs to the BUMP app (annotate/bump/migrations/0001_edit.py): it leaves this app's
record of models; its table is kept (the BUMP app uses it under the same name)."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("annotate", "0011_campaign_reviewers"),
        ("bump", "0001_edit"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="Edit")],
            database_operations=[],
        ),
    ]
