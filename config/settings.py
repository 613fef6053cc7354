"""
Settings for RealMath Workbench, driven by the environment.

Defaults give the embedded setup: SQLite and a Celery broker on the local file
system (no server). Set DATABASE_URL for PostgreSQL and CELERY_BROKER_URL for
Redis or RabbitMQ.

Every environment variable the app reads is read here, once, through the small typed helpers
below; apps read ``settings.X``. Exceptions: the *value* of an API-key variable is looked up at
call time (llm.client.read_api_key; the settings only name the variable). The libraries at the
top level (equivalence, llm) read no setting themselves: the Django side passes them the values
below (grading/apps.py, core/llm_settings.py).
"""
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.private_files import ensure_private_file, read_or_create_secret


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    return float(value) if value else default


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_path(name: str, default: Path) -> Path:
    return Path(os.environ.get(name) or default)


BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = env_path("REALMATH_VAR_DIR", BASE_DIR / "var")


DEBUG = env_bool("DJANGO_DEBUG", False)
VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
# A stable per-checkout key (file mode 0600) for the embedded setup; production sets DJANGO_SECRET_KEY.
SECRET_KEY = env_str("DJANGO_SECRET_KEY") or read_or_create_secret(VAR_DIR / "secret_key")

# `testserver` is not here: the test runner adds it itself.
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "axes",
    "accounts",
    "annotation",
    "ocr",
    "grading",
    "studies",
    "validity",
    "egress",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language: the cookie set by the language menu, else the browser's Accept-Language,
    # else LANGUAGE_CODE; a logged-in user's stored choice then wins (UserLanguageMiddleware).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.middleware.UserLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "accounts.middleware.LoginRequiredMiddleware",
    "config.request_input.RefuseNulBytesMiddleware",  # 400 for a NUL byte in any field (PostgreSQL cannot hold one)
    # Last, as django-axes asks: turns a lockout into the 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.role",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web server and the Celery worker use the file side by side. Transactions take
    # the write lock when they begin (BEGIN IMMEDIATE, waiting up to `timeout` for it), as
    # select_for_update would on PostgreSQL: a deferred one that reads, then writes after another
    # writer committed fails at once with "database is locked" (SQLite cannot upgrade a stale
    # snapshot), which made label saves retry for seconds while an import wrote its batches.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 30, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
         "transaction_mode": "IMMEDIATE"}
    )
    DATABASES["default"]["TEST"] = {"NAME": env_str("SQLITE_TEST_NAME") or None}
    # Created 0600 before the first connection; SQLite gives its -wal and -shm files the same mode.
    ensure_private_file(DATABASES["default"]["NAME"])

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# django-axes first: a locked-out login is refused before any password hash is computed.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# The interface language when neither the user nor the browser names one we have
# (docs/architecture.md "Languages"); `en` or `zh-hans`.
LANGUAGE_CODE = env_str("DJANGO_LANGUAGE_CODE") or "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
if LANGUAGE_CODE not in dict(LANGUAGES):
    raise ImproperlyConfigured(f"DJANGO_LANGUAGE_CODE must be one of {', '.join(dict(LANGUAGES))}, not {LANGUAGE_CODE!r}")
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
MEDIA_URL = "media/"
MEDIA_ROOT = env_path("REALMATH_MEDIA_ROOT", VAR_DIR / "media")
WHITENOISE_USE_FINDERS = True

# Where files live (docs/deploy.md): "local" (the folder MEDIA_ROOT, the embedded default) or "s3",
# an S3-compatible bucket through django-storages (MinIO, Ceph RGW, AWS S3), named with
# django-storages' own variables. Every machine of a deployment must see the same storage.
REALMATH_STORAGE = env_str("REALMATH_STORAGE", "local").lower()
if REALMATH_STORAGE not in ("local", "s3"):
    raise ImproperlyConfigured("REALMATH_STORAGE must be 'local' or 's3'.")
AWS_STORAGE_BUCKET_NAME = env_str("AWS_STORAGE_BUCKET_NAME")
AWS_S3_ENDPOINT_URL = env_str("AWS_S3_ENDPOINT_URL") or None
AWS_S3_REGION_NAME = env_str("AWS_S3_REGION_NAME") or None
AWS_ACCESS_KEY_ID = env_str("AWS_ACCESS_KEY_ID") or None
AWS_SECRET_ACCESS_KEY = env_str("AWS_SECRET_ACCESS_KEY") or None
# Downloads of private files stream through the app after its permission checks; a signed URL, when
# a download redirects to one, lives this many seconds.
AWS_QUERYSTRING_EXPIRE = env_int("REALMATH_SIGNED_URL_SECONDS", 300)
if REALMATH_STORAGE == "s3" and not AWS_STORAGE_BUCKET_NAME:
    raise ImproperlyConfigured("REALMATH_STORAGE=s3 needs AWS_STORAGE_BUCKET_NAME (and AWS_S3_ENDPOINT_URL for a "
                               "store other than AWS S3).")
STORAGES = {
    "default": (
        {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {
            "bucket_name": AWS_STORAGE_BUCKET_NAME, "endpoint_url": AWS_S3_ENDPOINT_URL,
            "region_name": AWS_S3_REGION_NAME, "access_key": AWS_ACCESS_KEY_ID, "secret_key": AWS_SECRET_ACCESS_KEY,
            "default_acl": None, "file_overwrite": False, "querystring_auth": True,
            "querystring_expire": AWS_QUERYSTRING_EXPIRE,
        }}
        if REALMATH_STORAGE == "s3" else
        {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    ),
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Uploads: refuse requests larger than this before they reach a view.
DATA_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FILES = 500
EXPORT_ROOT = env_path("REALMATH_EXPORT_ROOT", VAR_DIR / "exports")
# A running export whose worker gave no sign of life for this long lost its worker (killed): it is
# started again (up to JOB_MAX_ATTEMPTS takes in all), then marked failed.
EXPORT_STALE_SECONDS = env_int("REALMATH_EXPORT_STALE_SECONDS", 300)
# The same for imports (what a dead attempt wrote is removed before the next one starts).
IMPORT_STALE_SECONDS = env_int("REALMATH_IMPORT_STALE_SECONDS", 300)
# How many workers may take one export or import job before it is given up: a job that killed
# every worker it reached (e.g. out of memory) is not restarted for ever.
JOB_MAX_ATTEMPTS = env_int("REALMATH_JOB_MAX_ATTEMPTS", 3)
# How often a worker running an import shows it is alive (well under IMPORT_STALE_SECONDS).
IMPORT_HEARTBEAT_SECONDS = 10
# On SQLite a worker writes a large import in transactions of about this long, pausing between
# them so that label saves and logins get the write lock (annotation/importers/write_windows.py); on
# PostgreSQL (one transaction) it pauses so only when IMPORT_NICE is 0. Measured in docs/export.md.
IMPORT_BATCH_SECONDS = env_float("REALMATH_IMPORT_BATCH_SECONDS", 0.025)
IMPORT_BATCH_PAUSE_SECONDS = env_float("REALMATH_IMPORT_BATCH_PAUSE_SECONDS", 0.2)
# The CPU priority a worker's import runs at, added to the worker's nice value (0: the same):
# label saves in the web server go first on a small machine.
IMPORT_NICE = env_int("REALMATH_IMPORT_NICE", 10)
IMPORT_MAX_BYTES = env_int("REALMATH_IMPORT_MAX_BYTES", 200 * 1024 * 1024)
# Uploads larger than this are imported by a worker, with a progress bar; smaller ones at once.
IMPORT_SYNC_MAX_BYTES = env_int("REALMATH_IMPORT_SYNC_MAX_BYTES", 2 * 1024 * 1024)
IMPORT_ROOT = env_path("REALMATH_IMPORT_ROOT", VAR_DIR / "imports")

REST_FRAMEWORK = {
    # Token first: its authenticate_header makes a missing or bad credential a 401 with
    # `WWW-Authenticate: Token` (the first class names the scheme; the session's names none, which
    # made it a 403). A request without an Authorization header goes on to the session.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["accounts.permissions.IsAnnotator"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["config.api_filters.StrictFilterBackend"],  # unknown filters are a 400
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api_exceptions.exception_handler",
    # DRF's browsable API, under the CSP without inline styles (config/api_renderers.py).
    "DEFAULT_RENDERER_CLASSES": ["config.api_renderers.JSONRenderer", "config.api_renderers.BrowsableAPIRenderer"],
    # DRF's JSON parser with the importers' depth guard (a 5,000-deep body was a 500: core/api_parsers.py).
    "DEFAULT_PARSER_CLASSES": ["core.api_parsers.JSONParser", "rest_framework.parsers.FormParser",
                               "rest_framework.parsers.MultiPartParser"],
    # `format` is a filter of ours (exports by format), not a renderer switch; JSON is the only renderer we rely on.
    "URL_FORMAT_OVERRIDE": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "RealMath Workbench API",
    "DESCRIPTION": "Annotation and adjudication of LLM judges on real human math answers.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["accounts.permissions.IsAnnotator"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No badge fetched from the public validator (it would send the schema URL out).
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "REDOC_DIST": "SIDECAR",
    # Two choice sets are shared by several models; name them (else check --deploy warns).
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "annotation.export.models.ExportJob.Status",
        "RunStatusEnum": "grading.judges.models.JudgeRun.Status",
        # "strategy" is a field of both a judge setting (prompt strategy) and an assignment.
        "PromptStrategyEnum": "grading.judges.models.JudgeSetting.Strategy",
        "AssignmentStrategyEnum": "annotation.labelling.models.Assignment.Strategy",
    },
}

# Celery: a broker on the local file system by default, so `make run` needs no server.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
BROKER_DIR = VAR_DIR / "broker"
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("queue", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"  # kombu's, with messages that appear whole
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        # kombu polls a folder every second by default: a freed worker process would wait up to
        # that long for its next chunk (and the first chunk of a run as long). A listing every
        # 20 ms costs an idle worker about 0.3 % of a core.
        "polling_interval": 0.02,
    }
CELERY_TASK_IGNORE_RESULT = True
# The queue of tasks no route names (exports, imports, beat's periodic checks); tests give their
# workers a queue of their own.
CELERY_TASK_DEFAULT_QUEUE = env_str("REALMATH_DEFAULT_QUEUE", "celery")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Queues: judge, generation and meta-evaluation tasks go to JUDGE_TASK_QUEUE, OCR pages to
# OCR_QUEUE (blank: the default queue); core.routing.route_task reads them per message.
CELERY_TASK_ROUTES = ("core.routing.route_task",)
# Periodic work (`make run` starts one `celery -A config beat` beside its worker; at scale run one
# per installation, `make beat`): exports and imports whose worker died are restarted or marked
# failed here, never by a page read.
# How often beat sends the stale checks (seconds; tests make it short).
STALE_CHECK_SECONDS = env_float("REALMATH_STALE_CHECK_SECONDS", 60.0)
CELERY_BEAT_SCHEDULE = {
    "fail-stale-export-jobs": {"task": "annotation.fail_stale_export_jobs", "schedule": STALE_CHECK_SECONDS},
    "fail-stale-import-jobs": {"task": "annotation.fail_stale_import_jobs", "schedule": STALE_CHECK_SECONDS},
    "delete-expired-class-uploads": {"task": "ocr.delete_expired_class_uploads", "schedule": 3600.0},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# One beat per machine: a beat holds this file locked while it runs and a second one refuses to
# start (config/celery.py, `one_beat`); run one `celery -A config beat` per installation.
BEAT_LOCK_FILE = env_path("REALMATH_BEAT_LOCK", VAR_DIR / "celerybeat.lock")

# Shared counters for rate limits across workers: Redis when given, else the database cache.
# REALMATH_CACHE_KEY_PREFIX keeps installations that share one Redis database apart (their job
# ids repeat: import heartbeats are keyed by job id); the test suite gives each xdist worker its own.
REDIS_URL = env_str("REDIS_URL")
CACHE_KEY_PREFIX = env_str("REALMATH_CACHE_KEY_PREFIX")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                          "KEY_PREFIX": CACHE_KEY_PREFIX}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "KEY_PREFIX": CACHE_KEY_PREFIX}}

# LLM endpoint defaults (judges may name their own); the key is read from the environment only.
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_API_KEY_ENV = "OPENAI_API_KEY"
# The LLM transport (the `llm` library; core/llm_settings.py hands these to it): which variables an
# endpoint may name for its key (a trailing * is a prefix), which hosts LLM calls may go to
# (empty: any; Django ALLOWED_HOSTS syntax), how much of an answer is kept and read, where the
# rate limits keep their state without Redis (REDIS_URL, above, when set), and the retry back-off;
# whether limits are learned from the provider's x-ratelimit-* headers, and how long one call may
# wait in all for a provider answering 429 (those waits do not use up its attempts; docs/judges.md).
LLM_KEY_ENV_ALLOWED = env_list("REALMATH_LLM_KEY_ENV_ALLOWED", "OPENAI_API_KEY,REALMATH_LLM_KEY_*")
LLM_ALLOWED_HOSTS = env_list("REALMATH_LLM_ALLOWED_HOSTS")
LLM_MAX_OUTPUT_CHARS = env_int("REALMATH_LLM_MAX_OUTPUT_CHARS", 50_000)
LLM_MAX_REPLY_BYTES = env_int("REALMATH_LLM_MAX_REPLY_BYTES", 16_000_000)
LLM_RATELIMIT_DIR = env_path("REALMATH_RATELIMIT_DIR", VAR_DIR / "ratelimit")
LLM_RATELIMIT_PREFIX = env_str("REALMATH_RATELIMIT_PREFIX", "realmath:rl:")
LLM_RATELIMIT_WINDOW_SECONDS = env_float("REALMATH_RATELIMIT_WINDOW_SECONDS", 60.0)  # a shorter "minute": benches
LLM_RETRY_BASE_SECONDS = 1.0
LLM_RETRY_MAX_SECONDS = 60.0
LLM_PROVIDER_LIMITS = env_bool("REALMATH_LLM_PROVIDER_LIMITS", True)
LLM_RATE_LIMIT_MAX_WAIT_SECONDS = env_int("REALMATH_LLM_RATE_LIMIT_MAX_WAIT_SECONDS", 900)
# The Batch API (judge runs in "batch" mode, grading/judges/services/batches.py): what a batch
# costs against a live call (OpenAI: half; the cost estimate reads the same factor), how many
# request lines and bytes one uploaded file may hold (OpenAI: 50,000 lines, 200 MB), how often a
# run's batches are polled (first wait, doubled while nothing changes, up to the cap), how often a
# failed line is sent again in a later batch when the run retries failed lines in batches, and how
# long one file upload or download may take.
LLM_BATCH_PRICE_FACTOR = env_float("REALMATH_LLM_BATCH_PRICE_FACTOR", 0.5)
LLM_BATCH_MAX_LINES = env_int("REALMATH_LLM_BATCH_MAX_LINES", 50_000)
LLM_BATCH_MAX_BYTES = env_int("REALMATH_LLM_BATCH_MAX_BYTES", 200 * 1024 * 1024)
LLM_BATCH_POLL_SECONDS = env_float("REALMATH_LLM_BATCH_POLL_SECONDS", 30.0)
LLM_BATCH_POLL_MAX_SECONDS = env_float("REALMATH_LLM_BATCH_POLL_MAX_SECONDS", 600.0)
LLM_BATCH_MAX_SENDS = env_int("REALMATH_LLM_BATCH_MAX_SENDS", 3)
LLM_BATCH_FILE_TIMEOUT_SECONDS = env_float("REALMATH_LLM_BATCH_FILE_TIMEOUT_SECONDS", 900.0)

# Labelling (annotation.labelling): how long a handed-out open slot stays held, and the label
# spread from which a response goes to adjudication.
REALMATH_LABEL_LOCK_MINUTES = 30
REALMATH_ADJUDICATION_THRESHOLD = 2

# Answer equivalence (the `equivalence` library, docs/equivalence.md): worker processes per
# calling process, each one's address-space cap, the warm-up checks at start (0: skip, for tests)
# and the workers' stderr (1: shown). Passed to equivalence.configure() by grading's app config.
EQUIVALENCE_WORKERS = env_int("REALMATH_EQUIVALENCE_WORKERS", 2)
EQUIVALENCE_MEMORY_MB = env_int("REALMATH_EQUIVALENCE_MEMORY_MB", 1024)
EQUIVALENCE_WARMUP = env_str("REALMATH_EQUIVALENCE_WARMUP", "1").strip() != "0"
EQUIVALENCE_DEBUG = bool(env_str("REALMATH_EQUIVALENCE_DEBUG"))

# Judges (grading.judges): the Celery queue of judge and generation tasks ("" = the default queue).
JUDGE_TASK_QUEUE = env_str("REALMATH_JUDGE_QUEUE")

# OCR (ocr): limits that guard the upload path against hostile files, image sizes, the Celery
# queue of page tasks ("" = the default queue), and the engines. The vision engine names the
# environment variable that holds its key; its base URL falls back to OPENAI_BASE_URL.
OCR_MAX_UPLOAD_BYTES = env_int("OCR_MAX_UPLOAD_BYTES", 40 * 1024 * 1024)
OCR_MAX_PIXELS = env_int("OCR_MAX_PIXELS", 64_000_000)
OCR_MAX_SIDE = env_int("OCR_MAX_SIDE", 20_000)
OCR_MIN_SIDE = 32
OCR_MAX_PDF_PAGES = env_int("OCR_MAX_PDF_PAGES", 50)
OCR_MAX_FILES_PER_BATCH = 200
# A class's PDF (every packet in one file, cut by a roster and a template) may be larger.
OCR_MAX_CLASS_PDF_PAGES = env_int("OCR_MAX_CLASS_PDF_PAGES", 1000)
OCR_MAX_CLASS_PDF_BYTES = env_int("OCR_MAX_CLASS_PDF_BYTES", 200 * 1024 * 1024)
# A refused class PDF's three files are kept this long for a retry (ocr.class_uploads), at most
# this many per person; the hourly beat task deletes expired ones.
OCR_PENDING_CLASS_UPLOAD_HOURS = env_int("OCR_PENDING_CLASS_UPLOAD_HOURS", 24)
OCR_PENDING_CLASS_UPLOADS_PER_USER = 5
OCR_PDF_DPI = 200
OCR_WORK_MAX_SIDE = 2400
OCR_WEB_MAX_SIDE = 1600
OCR_THUMB_MAX_SIDE = 240
OCR_QUEUE = env_str("OCR_QUEUE")
OCR_DEFAULT_ENGINE = env_str("OCR_DEFAULT_ENGINE", "rapidocr")
OCR_ENGINE_THREADS = env_int("OCR_ENGINE_THREADS", 1)
OCR_WARM_UP = env_bool("OCR_WARM_UP", True)  # each worker process runs the default engine once at start
OCR_ENGINE_TIMEOUT = 180
OCR_TESSERACT_LANG = "chi_sim+eng"
OCR_LOW_CONFIDENCE = 0.80
OCR_VISION_BASE_URL = env_str("OCR_VISION_BASE_URL")
OCR_VISION_API_KEY_ENV = env_str("OCR_VISION_API_KEY_ENV", "OPENAI_API_KEY")
OCR_VISION_MODEL = env_str("OCR_VISION_MODEL")
OCR_VISION_MAX_TOKENS = 4096
OCR_VISION_MAX_RETRIES = 2

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
}

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

# Production behind HTTPS (docs/security.md): DJANGO_HTTPS=1 makes cookies secure, redirects
# http to https and sends HSTS; DJANGO_PROXY_COUNT=n trusts n reverse proxies in front of the
# app for X-Forwarded-Proto and for the client address in X-Forwarded-For.
HTTPS = env_bool("DJANGO_HTTPS", False)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
LANGUAGE_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31536000) if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
TRUSTED_PROXY_COUNT = env_int("DJANGO_PROXY_COUNT", 0)
if TRUSTED_PROXY_COUNT:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The health check answers over plain http too (load balancers probe it that way).
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

# Content Security Policy: no inline or foreign script or style anywhere. Templates carry no
# style attribute; scripts (ours, KaTeX's DOM output, Chart.js) style elements through CSSOM,
# which style-src 'self' allows (docs/security.md).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Login throttling (django-axes): after REALMATH_LOGIN_FAILURE_LIMIT failures for one username, or
# from one address, logins are refused for the cool-off, before any password hash is computed.
AXES_FAILURE_LIMIT = env_int("REALMATH_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("REALMATH_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_CLIENT_IP_CALLABLE = "accounts.security.client_ip"
AXES_LOCKOUT_CALLABLE = "accounts.security.lockout_response"
# A refused attempt neither extends the cool-off nor writes to the database (floods stay cheap).
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# Log lines name the username and address (the password is always masked).
AXES_SENSITIVE_PARAMETERS = []
