"""Writes of the ocr app, one module per concern:

- `ingest`: a batch made from uploads, each file read into pages, refusals recorded;
- `runs`: OCR runs of pages (queue, claim, watchdog, the engine on a page, the first
  transcript) and the page's images (stored files, rendering, preparation, renditions);
- `transcripts`: saving and verifying transcripts, the response written from the pages, flags.

The names below are the package's API: callers write ``services.ingest_uploads(...)``. A test
that replaces a function one of them calls replaces it in that module (``services.runs``).
"""
from .ingest import (  # noqa: F401
    BatchError,
    Upload,
    create_batch,
    ingest_new_batch,
    ingest_upload,
    ingest_uploads,
    uploads_from,
)
from .runs import (  # noqa: F401
    MAX_OCR_TAKEOVERS,
    delete_files,
    engine_input,
    perform_ocr_run,
    prepare_stored_page,
    processed_rendition,
    queue_engine_on_batch,
    queue_ocr,
    redacted_rendition,
    render_pending_page,
    retry_failed_runs,
    seed_transcript,
    store_file,
    warm_up_engines,
    watch_ocr_run,
    watch_running_ocr,
)
from .transcripts import (  # noqa: F401
    AUTOSAVE_MERGE_SECONDS,
    MAX_FLAG_NOTE,
    FlagInvalid,
    StaleTranscript,
    TranscriptError,
    flag_transcript,
    resolve_flags,
    save_transcript,
    score_runs,
    verify_transcript,
    write_response,
)
