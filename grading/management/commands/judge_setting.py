"""Judge settings from the command line, validated as the settings page validates them.

    python manage.py judge_setting add --name rubric-local --kind rubric --base-url http://127.0.0.1:8001/v1 \\
        --model qwen --api-key-env ""          # a blank key variable: a local server without a key
    python manage.py judge_setting add --name vf --kind rubric --strategy verification-first --base-url ... --model m
    python manage.py judge_setting add --name fs --kind rubric --strategy few-shot --examples 2 --split-rule student \
        --seed 0 [--comments] --base-url ... --model m     # examples chosen from the gold scores, recorded
    python manage.py judge_setting add --name vf-replay --kind replay --prompt-set vf --base-url ... --model m
    python manage.py judge_setting list [--format json|table]
    python manage.py judge_setting show NAME [--setting-version N] [--format json|table]

`add` goes through the page's form (grading.judges.forms.JudgeSettingForm: kinds, placeholders,
numbers) and services (a new name only; the endpoint's clean(): key variable and host
allow-lists). The endpoint is the existing one with the same base URL and key variable, else a
new one (services.find_or_create_endpoint). Nothing is saved when anything is refused.
"""
import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.translation import gettext

from grading.judges import selectors, services
from grading.judges.forms import JudgeSettingForm
from grading.models import JudgeSetting, LlmEndpoint, PromptSet

TABLE_COLUMNS = ("name", "version", "kind", "model", "temperature", "max_tokens", "base_url", "api_key_env", "strategy")


def _messages(error: ValidationError) -> str:
    if hasattr(error, "error_dict"):
        return " ".join(f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items())
    return " ".join(error.messages)


def _form_errors(form) -> str:
    return " ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())


class Command(BaseCommand):
    help = "Add, list or show judge settings (the same validation as the settings page)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        add = sub.add_parser("add", help="Create a judge setting (version 1).")
        add.add_argument("--name", required=True)
        add.add_argument("--kind", required=True, help="One of: " + ", ".join(
            k for k in JudgeSetting.Kind.values if k != JudgeSetting.Kind.EXTERNAL))
        add.add_argument("--base-url", dest="base_url", help="The OpenAI-compatible server, e.g. http://127.0.0.1:8001/v1.")
        add.add_argument("--model", default="")
        add.add_argument("--api-key-env", dest="api_key_env", default="OPENAI_API_KEY",
                         help='Variable holding the API key; "" for a server that needs none.')
        add.add_argument("--temperature", type=float)
        add.add_argument("--max-tokens", dest="max_tokens", type=int)
        add.add_argument("--strategy", choices=list(JudgeSetting.Strategy.values),
                         help="Rubric judge: the prompt strategy (default reason-then-score).")
        add.add_argument("--examples", type=int, help="Few-shot: examples per question (default 2).")
        add.add_argument("--split-rule", dest="split_rule", choices=list(JudgeSetting.SplitRule.values),
                         help="Few-shot: what an example may share with a judged answer (default student).")
        add.add_argument("--seed", type=int, help="Few-shot: seed of the example choice (default 0).")
        add.add_argument("--comments", action="store_true", help="Few-shot: show the experts' step comments.")
        add.add_argument("--example-source", dest="example_source", choices=list(JudgeSetting.ExampleSource.values),
                         help="Few-shot: where the examples come from: human (default, the paper's design: real "
                              "students' answers for every judged answer), same (the judged answer's source), any.")
        add.add_argument("--prompt-set", dest="prompt_set", help="Replay: the named prompt set to send.")
        add.add_argument("--format", choices=["json", "table"], default="table")
        listing = sub.add_parser("list", help="The newest version of every setting.")
        listing.add_argument("--format", choices=["json", "table"], default="table")
        show = sub.add_parser("show", help="One setting (its newest version unless --setting-version).")
        show.add_argument("name")
        show.add_argument("--setting-version", dest="setting_version", type=int)
        show.add_argument("--format", choices=["json", "table"], default="json")

    def handle(self, *args, **options):
        action = options["action"]
        if action == "add":
            self._print([selectors.setting_summary(self._add(options))], options["format"], single=True)
        elif action == "list":
            judge_settings = selectors.setting_list().select_related("endpoint")
            self._print([selectors.setting_summary(c) for c in judge_settings], options["format"])
        else:
            self._print([self._show(options)], options["format"], single=True)

    def _add(self, options):
        if options["base_url"] is not None and not options["base_url"].strip():
            raise CommandError(gettext("--base-url is blank: give an http:// or https:// URL, or leave the option out."))
        try:
            with transaction.atomic():
                endpoint = None
                if options["base_url"]:
                    endpoint = services.find_or_create_endpoint(options["base_url"], options["api_key_env"])
                form = JudgeSettingForm(data=self._form_data(options, endpoint))
                if not form.is_valid():
                    raise CommandError(gettext("Refused: %(_form_errors)s") % {"_form_errors": _form_errors(form)})
                setting = services.create_judge_setting(name=form.cleaned_data["name"], **form.setting_fields())
        except ValidationError as exc:
            raise CommandError(gettext("Refused: %(_messages)s") % {"_messages": _messages(exc)}) from exc
        if endpoint is not None:
            for warning in services.endpoint_warnings(endpoint):
                self.stderr.write(gettext("Warning: %(warning)s") % {"warning": warning})
        return JudgeSetting.objects.select_related("endpoint").get(pk=setting.pk)

    @staticmethod
    def _form_data(options, endpoint: LlmEndpoint | None) -> dict:
        """The settings form's fields: the model's defaults, then what the command was given."""
        data = {}
        for name in JudgeSettingForm.Meta.fields:
            default = JudgeSetting._meta.get_field(name).get_default()
            if isinstance(default, bool):
                if default:
                    data[name] = "on"
            elif default is not None:
                data[name] = json.dumps(default) if isinstance(default, dict) else default
        data.update(name=options["name"], kind=options["kind"], model=options["model"],
                    endpoint=endpoint.pk if endpoint else "")
        for name in ("temperature", "max_tokens"):
            if options[name] is not None:
                data[name] = options[name]
        for option, name in (("strategy", "strategy"), ("examples", "few_shot_k"), ("split_rule", "split_rule"),
                             ("seed", "few_shot_seed"), ("example_source", "few_shot_source")):
            if options.get(option) is not None:
                data[name] = options[option]
        if options.get("comments"):
            data["few_shot_comments"] = "on"
        if options.get("prompt_set"):
            prompt_set = PromptSet.objects.filter(name=options["prompt_set"]).first()
            if prompt_set is None:
                known = ", ".join(PromptSet.objects.values_list("name", flat=True)) or "none yet"
                raise CommandError(f"No prompt set {options['prompt_set']!r}. Known: {known}.")
            data["prompt_set"] = prompt_set.pk
        return data

    def _show(self, options):
        judge_settings = JudgeSetting.objects.select_related("endpoint").filter(name=options["name"])
        if options["setting_version"] is not None:
            judge_settings = judge_settings.filter(version=options["setting_version"])
        setting = judge_settings.order_by("-version").first()
        if setting is None:
            known = ", ".join(sorted(set(JudgeSetting.objects.values_list("name", flat=True)))) or "none yet"
            raise CommandError(gettext("No setting %(name)s. Known: %(known)s.") % {"name": repr(options['name']), "known": known})
        system, template = selectors.effective_prompts(setting)
        return {**selectors.setting_summary(setting), "system_prompt": system, "prompt_template": template,
                "notes": setting.notes}

    def _print(self, rows, fmt, *, single=False):
        if fmt == "json":
            self.stdout.write(json.dumps(rows[0] if single else rows, indent=2, ensure_ascii=False))
            return
        if single and len(rows) == 1 and "prompt_template" in rows[0]:
            width = max(len(key) for key in rows[0])
            for key, value in rows[0].items():
                self.stdout.write(f"{key:<{width}}  {value}")
            return
        table = [TABLE_COLUMNS] + [tuple("" if row[c] is None else str(row[c]) for c in TABLE_COLUMNS) for row in rows]
        widths = [max(len(line[i]) for line in table) for i in range(len(TABLE_COLUMNS))]
        for line in table:
            self.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
