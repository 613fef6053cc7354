from django import forms


class DatasetImportForm(forms.Form):
    FORMATS = [("realmath", "RealMath-Eval release (JSON array)"), ("ineqmath", "IneqMath records (JSON array)")]

    format = forms.ChoiceField(choices=FORMATS)
    file = forms.FileField()
    exam = forms.CharField(required=False, max_length=200, help_text="Exam / batch name (optional).")
