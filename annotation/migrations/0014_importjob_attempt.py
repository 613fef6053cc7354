from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0013_adjudication_sub_scores'),
    ]

    operations = [
        migrations.AddField(
            model_name='importjob',
            name='attempt',
            field=models.PositiveIntegerField(default=0, help_text='Raised each time a worker takes the job; a worker writes only while it is current.'),
        ),
    ]
