"""The pages every kind of run has: its progress as JSON, cancel and resume (reviewers and up).

`run_action_views` makes the three views of one kind from its run model, its progress selector
and its cancel and resume services (grading.runs.engine.RunEngine underneath), so judge, generation,
probe, meta-evaluation and geometry runs answer alike: a resume is refused with a message while the run
still makes progress (unless the form sends ``force``), and both actions go back to the run's
page (or to a safe ``next``).
"""
from dataclasses import dataclass

from django.contrib import messages
from django.http import HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.decorators import reviewer_required
from core.shortcuts import get_object_or_404

from .engine import may_resume


@dataclass(frozen=True)
class RunActionViews:
    progress: object
    cancel: object
    resume: object


def run_action_views(*, model, progress, cancel, resume, back, title, cancelled, resumed):
    """Views for one kind of run.

    `progress(run)` is its progress dict (with ``can_resume``); `cancel(run)` and `resume(run)`
    its services; `back` the URL name of the page to go back to (it takes ``pk``), or a
    callable ``back(run)`` returning that URL; `title(run)` names the run in messages;
    `cancelled` and `resumed` are the messages, with ``%(run)s`` for the title.
    """

    def go_back(request, run):
        target = request.POST.get("next", "")
        if target.startswith("/") and url_has_allowed_host_and_scheme(
                target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
            return HttpResponseRedirect(target)  # a local path only (redirect() would read "²" as a view name)
        return redirect(back(run) if callable(back) else reverse(back, kwargs={"pk": run.pk}))

    @reviewer_required
    def progress_view(request, pk):
        return JsonResponse(progress(get_object_or_404(model, pk=pk)))

    @reviewer_required
    @require_POST
    def cancel_view(request, pk):
        run = cancel(get_object_or_404(model, pk=pk))
        messages.success(request, cancelled % {"run": title(run)})
        return go_back(request, run)

    @reviewer_required
    @require_POST
    def resume_view(request, pk):
        run = get_object_or_404(model, pk=pk)
        if may_resume(progress(run), request.POST.get("force")):
            run = resume(run)
            messages.success(request, resumed % {"run": title(run)})
        else:
            messages.error(request, _("%(run)s is still making progress (or has nothing left to do); resume it once "
                                      "it is cancelled or stalls.") % {"run": title(run)})
        return go_back(request, run)

    return RunActionViews(progress_view, cancel_view, resume_view)
