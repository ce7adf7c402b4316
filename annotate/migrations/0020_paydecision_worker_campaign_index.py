# A worker's pay decisions in a campaign by kind: a submission asks whether pay is held without reading the whole ledger.

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0019_assignment_item_status_network_index'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='paydecision',
            index=models.Index(fields=['worker', 'campaign', 'kind'], name='paydecision_worker_campaign'),
        ),
    ]
