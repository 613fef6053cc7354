from django import forms


class DatasetImportForm(forms.Form):
    FORMATS = [
        ("realmath", "RealMath-Eval release (JSON array)"),
        ("ineqmath", "IneqMath records (JSON array)"),
        ("dataset", "Full JSONL export of this tool (dataset.jsonl, or the export's zip)"),
    ]

    format = forms.ChoiceField(choices=FORMATS)
    file = forms.FileField()
    exam = forms.CharField(required=False, max_length=200, help_text="Exam / batch name (optional).")
