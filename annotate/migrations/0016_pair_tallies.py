"""Tallies of each pair of workers' shared answers (annotate.services.independence): a submission adds its item
to them instead of comparing the pair's whole history. Tallies are counted from the history the first time a pair
shares an item after this migration, so none is made here."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0015_campaign_kind_default_from_registry'),
    ]

    operations = [
        migrations.CreateModel(
            name='PairTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('checks_version', models.PositiveIntegerField(null=True)),
                ('shared_items', models.PositiveIntegerField(default=0)),
                ('a_after_b', models.PositiveIntegerField(default=0)),
                ('b_after_a', models.PositiveIntegerField(default=0)),
                ('shared_sentences', models.PositiveIntegerField(default=0)),
                ('agree', models.PositiveIntegerField(default=0)),
                ('a_yes', models.PositiveIntegerField(default=0)),
                ('b_yes', models.PositiveIntegerField(default=0)),
                ('identical', models.PositiveIntegerField(default=0)),
                ('same_times', models.PositiveIntegerField(default=0)),
                ('campaign', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotate.campaign')),
                ('worker_a', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotate.worker')),
                ('worker_b', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotate.worker')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('campaign', 'worker_a', 'worker_b'), name='pair_tally_once_per_pair'), models.CheckConstraint(condition=models.Q(('worker_a__lt', models.F('worker_b'))), name='pair_tally_pair_ordered'), models.CheckConstraint(condition=models.Q(('a_after_b__lte', models.F('shared_items')), ('agree__lte', models.F('shared_sentences')), ('b_after_a__lte', models.F('shared_items')), ('identical__lte', models.F('agree'))), name='pair_tally_counts_consistent')],
            },
        ),
    ]
