# An item's assignments by status and network: a claim asks of each candidate item whether the claiming network holds or judged it from the index alone.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0018_assignment_worker_latest_index'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='assignment',
            name='annotate_as_item_id_6863f7_idx',
        ),
        migrations.AddIndex(
            model_name='assignment',
            index=models.Index(fields=['item', 'status', 'network'], name='assignment_item_status_network'),
        ),
    ]
