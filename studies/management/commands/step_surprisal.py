"""Step surprisal: how predictable each next reasoning step is to a served causal model.

    python manage.py step_surprisal --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen3-8B \\
        [--api-key-env VAR] [--exam E] [--limit N] [--top-k 5] [--splitter rule|llm] [--prompt-logprobs]
        [--source human --source synthetic --source probe-derived] [--format json]
    python manage.py step_surprisal ... --segments-in human_error_steps_step_split.jsonl \
        --segments-in llm_error_steps_step_split.jsonl       # the paper's bundle: its segments and its steps

The endpoint must answer /v1/completions with echo and logprobs (vLLM does), or, with
--prompt-logprobs, with vLLM's prompt_logprobs. Per group: mean
and median surprisal (nats per token) and logical likelihood with bootstrap intervals, and how
often LL is only a lower bound (docs/studies.md, "Step surprisal").
"""
from django.core.management.base import BaseCommand

from studies.geometry.models import GeometryRun

from ._geometry import add_common_arguments, endpoint_of, finish, fmt, start


class Command(BaseCommand):
    help = "Mean token surprisal and logical likelihood of each next step of the error segments."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", required=True, help="An OpenAI-compatible /v1 base URL (completions with logprobs).")
        parser.add_argument("--model", required=True, help="The causal model.")
        parser.add_argument("--api-key-env", default="OPENAI_API_KEY",
                            help='The variable holding the key ("" for a server that needs none).')
        parser.add_argument("--top-k", type=int, default=5, help="Log-probabilities asked per position.")
        parser.add_argument("--splitter", choices=["rule", "llm"], default="rule",
                            help="rule: the rule-based split; llm: the model writes \"Step 1: ...\" lines, kept only "
                                 "when they reproduce the text (else the rule-based split, counted).")
        parser.add_argument("--splitter-model", default="", help="The chat model that splits (default: --model).")
        parser.add_argument("--splitter-base-url", help="Where the splitter model is served (default: --base-url).")
        parser.add_argument("--splitter-api-key-env", help="The splitter endpoint's key variable (default: --api-key-env).")
        parser.add_argument("--prompt-logprobs", action="store_true",
                            help="Ask in vLLM's form (its prompt_logprobs parameter) instead of echo + logprobs; "
                                 "either answer is read.")
        add_common_arguments(parser)

    def handle(self, *args, **options):
        splitter_endpoint = None
        if options["splitter_base_url"]:
            key = options["splitter_api_key_env"]
            splitter_endpoint = endpoint_of({"base_url": options["splitter_base_url"],
                                             "api_key_env": options["api_key_env"] if key is None else key})
        run = start(options, kind=GeometryRun.Kind.SURPRISAL, splitter_endpoint=splitter_endpoint, backend=GeometryRun.Backend.SERVED,
                    endpoint=endpoint_of(options), model=options["model"], top_k=options["top_k"],
                    splitter=options["splitter"], splitter_model=options["splitter_model"],
                    logprobs_shape="prompt_logprobs" if options["prompt_logprobs"] else "echo")
        finish(run, options, self.stdout, self.stderr, table)


def table(results, out):
    out.write(f"{results['model']}")
    out.write(f"{'group':10} {'steps':>6} {'surprisal mean [95% CI]':28} {'median':>7} {'LL mean [95% CI]':28} "
              f"{'median':>7} {'LL bound':>8}")
    for name, group in results["groups"].items():
        s, ll = group["surprisal"], group["ll"]
        out.write(f"{name:10} {group['transitions']:>6} {fmt(s['mean'], s['mean_ci']):28} {fmt(s['median']):>7} "
                  f"{fmt(ll['mean'], ll['mean_ci']):28} {fmt(ll['median']):>7} {group['ll_lower_bound']:>8}")
    dropped = results.get("counts", {}).get("transitions_dropped")
    if dropped:  # issue 34: a transition without step tokens is left out, its segment kept
        out.write("transitions left out: " + ", ".join(f"{reason} {n}" for reason, n in sorted(dropped.items())))
