"""Pages of generation runs, under /grading/judges/generation/ (namespace `grading`): the list, the
start form, a run's page with live progress, and its progress, cancel and resume actions.
Reviewers and admins only."""
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy

from accounts.decorators import reviewer_required
from core.shortcuts import get_object_or_404

from ..judges.views import errors_text
from ..runs.views import run_action_views
from . import selectors, services
from .forms import GenerationRunForm
from .models import GenerationRun


@reviewer_required
def generation_list(request):
    page = Paginator(selectors.generation_run_list(), 50).get_page(request.GET.get("page"))
    return render(request, "grading/generation/run_list.html", {"page": page})


@reviewer_required
def generation_start(request):
    form = GenerationRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = services.start_generation_run(
                endpoint=data["endpoint"], models=data["models"], temperatures=data["temperatures"],
                per_cell=data["per_cell"], questions=data["questions"],
                prompt_template=data["prompt_template"], system_prompt=data["system_prompt"],
                max_tokens=data["max_tokens"], user=request.user, name=data["name"],
                price_input_per_1k=data["price_input_per_1k"], price_output_per_1k=data["price_output_per_1k"],
            )
        except ValidationError as exc:
            form.add_error(None, errors_text(exc))
        else:
            messages.success(request, gettext("Started generation run %(pk)s: %(n_items)s answers to write.") % {"pk": run.pk, "n_items": run.n_items})
            return redirect("grading:judge_generation_detail", pk=run.pk)
    return render(request, "grading/generation/run_start.html", {"form": form})


@reviewer_required
def generation_detail(request, pk):
    run = get_object_or_404(selectors.generation_runs_for_detail(), pk)
    page = Paginator(selectors.generation_items(run), 50).get_page(request.GET.get("page"))
    return render(
        request, "grading/generation/run_detail.html",
        {"run": run, "progress": selectors.generation_progress(run), "page": page},
    )


GENERATION_RUN_ACTIONS = run_action_views(
    model=GenerationRun, progress=selectors.generation_progress, cancel=services.cancel_generation_run,
    resume=services.resume_generation_run, back="grading:judge_generation_detail",
    title=lambda run: _("Generation run %d") % run.pk, cancelled=_lazy("%(run)s cancelled."),
    resumed=_lazy("%(run)s resumed: everything without a finished result is queued again."),
)
