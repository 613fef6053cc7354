"""The judge setting's model takes the name the UI, the CLI and the functions use (data kept)."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("grading", "0002_review"),
    ]

    operations = [
        migrations.RenameModel(old_name="JudgeConfig", new_name="JudgeSetting"),
    ]
