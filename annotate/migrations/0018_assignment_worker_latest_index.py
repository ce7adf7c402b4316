# A worker's assignments by status and submission time: the submit reads a worker's latest items from the index's end.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0017_participation_items_claimed'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='assignment',
            name='annotate_as_worker__947dfe_idx',
        ),
        migrations.AddIndex(
            model_name='assignment',
            index=models.Index(fields=['worker', 'status', 'submitted_at'], name='assignment_worker_latest'),
        ),
    ]
