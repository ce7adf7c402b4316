"""Data: the ``researchers`` group exists after ``migrate`` (annotate.roles.RESEARCHER_GROUP)."""
from django.db import migrations


def create_researchers_group(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Group.objects.get_or_create(name="researchers")


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0001_crowdsourcing"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(create_researchers_group, migrations.RunPython.noop)]
