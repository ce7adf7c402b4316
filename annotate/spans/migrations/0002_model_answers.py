# A model annotator's answers are stored without an assignment, by its pseudo-worker, once per summary.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0011_campaign_reviewers'),
        ('spans', '0001_initial'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='spananswer',
            name='span_answer_imported_xor_assigned',
        ),
        migrations.AddConstraint(
            model_name='spananswer',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('assignment__isnull', False), ('source', 'crowd'), ('worker__isnull', False)), models.Q(('assignment__isnull', True), ('source', 'model'), ('worker__isnull', False)), models.Q(('assignment__isnull', True), ('source', 'imported'), ('worker__isnull', True)), _connector='OR'), name='span_answer_source_fits_its_links'),
        ),
        migrations.AddConstraint(
            model_name='spananswer',
            constraint=models.UniqueConstraint(condition=models.Q(('source', 'model')), fields=('summary', 'worker'), name='span_answer_once_per_model'),
        ),
    ]
