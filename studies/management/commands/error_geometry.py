"""Error-segment geometry: how spread out the segments where answers lost points are, per group.

    python manage.py error_geometry --lexical [--exam E] [--format json] [--segments-out FILE.jsonl]
        [--source human --source synthetic --source probe-derived]
    python manage.py error_geometry --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen3-Embedding-8B \\
        [--api-key-env VAR] [--exam E] [--format json]

Every figure (dispersion, total variance, top-10 share, clusters, noise, silhouette, GMM BIC,
the heatmap, the permutation test), with the model, endpoint, selection and seeds, is the JSON
printed by --format json (docs/studies.md, "Error geometry"). Without --inline the run goes to
the Celery workers and the command follows it to the end.
"""
from django.core.management.base import BaseCommand

from core import uncertainty
from studies.geometry.models import GeometryRun

from ._geometry import add_common_arguments, endpoint_of, finish, fmt, start


class Command(BaseCommand):
    help = "Dispersion, variance, clusters and the human-vs-synthetic test of the error segments' vectors."

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--lexical", action="store_true",
                            help="The lexical baseline (TF-IDF character n-grams + SVD): no model, not semantic.")
        source.add_argument("--base-url", help="An OpenAI-compatible /v1 base URL serving embeddings.")
        parser.add_argument("--model", help="The embedding model (with --base-url).")
        parser.add_argument("--api-key-env", default="OPENAI_API_KEY",
                            help='The variable holding the key ("" for a server that needs none).')
        parser.add_argument("--permutations", type=int, default=1000)
        parser.add_argument("--no-clusters", action="store_true", help="Skip UMAP + HDBSCAN and the GMM sweep.")
        add_common_arguments(parser)

    def handle(self, *args, **options):
        if options["lexical"]:
            kwargs = {"backend": GeometryRun.Backend.LEXICAL}
        else:
            kwargs = {"backend": GeometryRun.Backend.SERVED, "endpoint": endpoint_of(options), "model": options["model"] or ""}
        run = start(options, kind=GeometryRun.Kind.GEOMETRY, permutations=options["permutations"],
                    cluster=not options["no_clusters"], **kwargs)
        finish(run, options, self.stdout, self.stderr, table)


def table(results, out):
    out.write(f"{results['label']}" + (f": {results['model']}" if results.get("model") else ""))
    out.write(f"{'group':10} {'n':>5} {'dispersion [95% CI]':28} {'total var':>9} {'top-10':>7} {'clusters':>8} "
              f"{'noise':>6} {'silhouette':>10} {'GMM k':>6}")
    for name, group in results["groups"].items():
        out.write(f"{name:10} {group['n']:>5} {fmt(group['dispersion'], group['dispersion_ci']):28} "
                  f"{fmt(group['total_variance']):>9} {fmt(group['top10_share']):>7} {fmt(group.get('clusters')):>8} "
                  f"{fmt(group.get('noise_share')):>6} {fmt(group.get('silhouette')):>10} "
                  f"{_best_k(group.get('gmm') or {}):>6}")
    if any((group.get("gmm") or {}).get("at_edge") for group in results["groups"].values()):
        out.write("* GMM best k at the edge of its sweep (the largest k tried): the BIC found no minimum")
    test = (results.get("human_vs_synthetic") or {}).get("dispersion")
    if test:
        out.write(f"dispersion human - synthetic: {fmt(test['difference'])}, "
                  f"permutation p = {uncertainty.format_p(test['p'], test.get('resolution'))}")


def _best_k(gmm) -> str:
    """The GMM's best k, starred when it is the largest k of the sweep (`at_edge`)."""
    return fmt(gmm.get("best_k")) + ("*" if gmm.get("at_edge") else "")
