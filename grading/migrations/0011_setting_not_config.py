# One name per concept: JudgeRun.config and JudgeResult.config are `setting`. State only: the
# column stays config_id (db_column), and so do the constraint and the two indexes.

from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):

    dependencies = [
        ("grading", "0010_batch_run_base"),
    ]

    state_operations = [
        migrations.RemoveConstraint(model_name="judgeresult", name="unique_judge_result"),
        migrations.RemoveIndex(model_name="judgeresult", name="grading_jud_config__179c40_idx"),
        migrations.RemoveIndex(model_name="judgeresult", name="grading_jud_respons_ff6c5a_idx"),
        migrations.RenameField(model_name="judgerun", old_name="config", new_name="setting"),
        migrations.RenameField(model_name="judgeresult", old_name="config", new_name="setting"),
        migrations.AlterField(
            model_name="judgerun",
            name="setting",
            field=models.ForeignKey(db_column="config_id", on_delete=django.db.models.deletion.PROTECT,
                                    related_name="runs", to="grading.judgesetting"),
        ),
        migrations.AlterField(
            model_name="judgeresult",
            name="setting",
            field=models.ForeignKey(db_column="config_id", on_delete=django.db.models.deletion.PROTECT,
                                    related_name="results", to="grading.judgesetting"),
        ),
        migrations.AlterModelOptions(name="judgeresult", options={"ordering": ["response_id", "setting_id", "id"]}),
        migrations.AddConstraint(
            model_name="judgeresult",
            constraint=models.UniqueConstraint(fields=("setting", "response", "cache_key"), name="unique_judge_result"),
        ),
        migrations.AddIndex(
            model_name="judgeresult",
            index=models.Index(fields=["setting", "cache_key"], name="grading_jud_config__179c40_idx"),
        ),
        migrations.AddIndex(
            model_name="judgeresult",
            index=models.Index(fields=["response", "setting"], name="grading_jud_respons_ff6c5a_idx"),
        ),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=state_operations, database_operations=[])]
