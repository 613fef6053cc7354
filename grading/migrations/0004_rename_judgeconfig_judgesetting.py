"""The judge setting's model takes the name the UI, the CLI and the functions use (data kept)."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("grading", "0003_judgeconfig_cas_answer_tolerance_second_opinion"),
    ]

    operations = [
        migrations.RenameModel(old_name="JudgeConfig", new_name="JudgeSetting"),
    ]
