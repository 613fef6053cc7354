"""Issue 34: where a few-shot setting's examples come from. Settings saved before chose among every
gold-scored answer, so they are recorded as "any"; new settings default to real students' answers (the
paper's design)."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("grading", "0018_run_elapsed_over_epochs_temperature_zero"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgesetting",
            name="few_shot_source",
            field=models.CharField(
                choices=[
                    ("human", "Real students' answers only, for every judged answer (the paper's design)"),
                    ("same", "The judged answer's own source (human examples for human answers, synthetic for synthetic)"),
                    ("any", "Any answer with a gold score, human or synthetic"),
                ],
                default="any", help_text="Few-shot: which answers the examples are taken from.", max_length=10,
                verbose_name="examples from",
            ),
        ),
        migrations.AlterField(
            model_name="judgesetting",
            name="few_shot_source",
            field=models.CharField(
                choices=[
                    ("human", "Real students' answers only, for every judged answer (the paper's design)"),
                    ("same", "The judged answer's own source (human examples for human answers, synthetic for synthetic)"),
                    ("any", "Any answer with a gold score, human or synthetic"),
                ],
                default="human", help_text="Few-shot: which answers the examples are taken from.", max_length=10,
                verbose_name="examples from",
            ),
        ),
    ]
