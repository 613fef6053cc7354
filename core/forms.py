"""The punctuation after a form field's label, in the interface's language ("Old password:" / "旧密码：").

Django's forms end a label with gettext(":") (BaseForm.__init__) and leave it alone when the label
already ends with one of gettext(":?.!") (BoundField.label_tag). Django's own zh_Hans catalogue
keeps both ASCII; ours translates them to full-width punctuation, and a catalogue in LOCALE_PATHS
takes precedence over Django's, so every form (ours, Django's auth forms, the admin's) reads
"旧密码：" without a label_suffix on each. Marking the two msgids here keeps them in our catalogue
when `make messages` runs (its --no-obsolete would drop an entry no source names).
"""
from django.utils.translation import gettext_lazy

# Translators: Django's suffix after a form field's label: a full-width colon in Chinese.
LABEL_SUFFIX = gettext_lazy(":")
# Translators: Django's list of characters that, ending a label, stop the label suffix from being
# added: keep the ASCII ones and add the full-width ones in Chinese.
LABEL_ENDINGS = gettext_lazy(":?.!")
