# The ledger's entries and pay decisions are read by worker and campaign: one index each, leading with the worker, replaces the index by worker alone.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0020_paydecision_worker_campaign_index'),
    ]

    operations = [
        migrations.AlterField(
            model_name='bonusentry',
            name='worker',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='bonuses', to='annotate.worker'),
        ),
        migrations.AlterField(
            model_name='paydecision',
            name='worker',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='pay_decisions', to='annotate.worker'),
        ),
        migrations.AddIndex(
            model_name='bonusentry',
            index=models.Index(fields=['worker', 'campaign', 'amount'], name='bonusentry_worker_campaign'),
        ),
    ]
