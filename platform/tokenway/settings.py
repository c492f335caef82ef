"""Django settings for Tokenway. Everything configurable comes from the environment."""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from contracts.env import (
    DEV_CREDENTIAL_KEYS,
    DEV_PEPPER,
    DEV_SECRET_KEY,
    env_bool,
    env_int,
    env_list,
    env_secret,
    env_str,
)
from contracts.url_policy import allowed_ports_setting
from foundation.env import read_stack_env
from tokenway.dburl import database_from_url

BASE_DIR = Path(__file__).resolve().parents[2]
DATA_DIR = Path(env_str("TOKENWAY_DATA_DIR", str(BASE_DIR / ".data")))

DEBUG = env_bool("DJANGO_DEBUG", False)
TOKENWAY_ENV = env_str("TOKENWAY_ENV", "development")  # development | test | production
IS_PRODUCTION = TOKENWAY_ENV == "production"

SECRET_KEY = env_secret("DJANGO_SECRET_KEY", "" if IS_PRODUCTION else DEV_SECRET_KEY)
if IS_PRODUCTION and not SECRET_KEY:
    raise RuntimeError("DJANGO_SECRET_KEY must be set in production")

# API keys are stored as HMAC-SHA256(pepper, key). The gateway reads the same value.
API_KEY_PEPPER = env_secret("TOKENWAY_KEY_PEPPER", "" if IS_PRODUCTION else DEV_PEPPER)
# /metrics: with a token, only "Authorization: Bearer <token>"; without, loopback clients only.
METRICS_TOKEN = env_secret("TOKENWAY_METRICS_TOKEN", "")
if IS_PRODUCTION and not API_KEY_PEPPER:
    raise RuntimeError("TOKENWAY_KEY_PEPPER must be set in production")

# BYOK credentials: comma-separated Fernet keys, newest first (MultiFernet rotation).
CREDENTIAL_KEYS = env_list("TOKENWAY_CREDENTIAL_KEYS", [] if IS_PRODUCTION else DEV_CREDENTIAL_KEYS)
ALLOW_LOOPBACK_PROVIDER_URLS = env_bool("TOKENWAY_ALLOW_LOOPBACK_URLS", not IS_PRODUCTION)
# Ports a BYOK base URL may name: production 80, 443 and TOKENWAY_BYOK_ALLOWED_PORTS; elsewhere any (None).
BYOK_ALLOWED_PORTS = allowed_ports_setting()

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "tokenway",
    "accounts",
    "tenants",
    "apikeys",
    "credentials",
    "catalog",
    "metering",
    "evaluation",
    "frontend",
    "outbox",
    "publishing",
    "demodata",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files as in production: hashed names from the manifest, served with far-future cache headers.
    "servestatic.middleware.ServeStaticMiddleware",
    # Pages compressed (the leaderboard's HTML is ~180 KB raw); static files come precompressed from above,
    # so they never reach this. Django's own mitigation of BREACH (random padding) applies.
    "django.middleware.gzip.GZipMiddleware",
    # One server span per request when traces are on; off, Django leaves it out of the chain (its module says how).
    "foundation.web_traces.WebTraceMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "tokenway.urls"
ASGI_APPLICATION = "tokenway.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

# Unset URLs fall back to the servers a running `make run` wrote down (not in tests).
RUNNING_STACK = {} if TOKENWAY_ENV == "test" else read_stack_env(DATA_DIR / "stack.env")
DATABASE_URL = env_str(
    "DATABASE_URL", RUNNING_STACK.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
)
DATABASES = {"default": database_from_url(DATABASE_URL)}
DATABASES["default"]["TEST"] = {"NAME": env_str("TOKENWAY_TEST_DB", f"test_tokenway_{os.getpid()}")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", RUNNING_STACK.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
# "1": REDIS_URL names a node of a Redis Cluster; "0": a single server; unset: ask it (INFO cluster).
TOKENWAY_REDIS_CLUSTER = env_str("TOKENWAY_REDIS_CLUSTER", RUNNING_STACK.get("TOKENWAY_REDIS_CLUSTER", ""))
# Celery's broker and the Channels layer need a single server (lists, BRPOP, no cluster support):
# with REDIS_URL a cluster, point CELERY_BROKER_URL and CHANNELS_REDIS_URL at a plain Redis.
CHANNELS_REDIS_URL = env_str("CHANNELS_REDIS_URL", RUNNING_STACK.get("CHANNELS_REDIS_URL", REDIS_URL))

AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/console/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "frontend" / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
# `collectstatic` (part of `make install`) fills it: hashed, compressed copies listed in a manifest.
STATIC_ROOT = Path(env_str("TOKENWAY_STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "servestatic.storage.CompressedManifestStaticFilesStorage"},
}
SERVESTATIC_KEEP_ONLY_HASHED_FILES = True  # only the hashed names are served (immutable, cached for a year)

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Tokenway <no-reply@tokenway.local>")
# Absolute links in emails (invitations); empty = the address of the request that sends them.
TOKENWAY_SITE_URL = env_str("TOKENWAY_SITE_URL", "")

DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("TOKENWAY_MAX_BODY_BYTES", 1_048_576)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["foundation.api_parsers.LimitedJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "foundation.api_errors.exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Tokenway management API",
    "DESCRIPTION": "Tenants, members, API keys, provider credentials, catalog, usage and billing.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc ship with the project (drf-spectacular-sidecar): no page loads from outside.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "foundation.api_schema.add_error_responses",
    ],
}

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        # channels-redis blocks up to 5 s per BRPOP; the client's read timeout must outlast it.
        "CONFIG": {"hosts": [{"address": CHANNELS_REDIS_URL, "socket_timeout": 30}]},
    }
}

# Celery: broker and result backend in Redis; one queue per concern plus probes.<region>.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", RUNNING_STACK.get("CELERY_BROKER_URL", REDIS_URL))
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", CELERY_BROKER_URL)
if TOKENWAY_REDIS_CLUSTER.strip() == "1" and REDIS_URL in (CELERY_BROKER_URL, CHANNELS_REDIS_URL):
    raise ImproperlyConfigured(
        "REDIS_URL is a Redis Cluster (TOKENWAY_REDIS_CLUSTER=1): set CELERY_BROKER_URL and CHANNELS_REDIS_URL "
        "to a single Redis server (Celery and Channels cannot use a cluster)"
    )
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# Retention of the monthly usage and ledger partitions, in days (metering.retention): older months are
# detached (kept as tables for the operator to archive or drop), never deleted. 0 keeps everything; the
# shortest accepted is 62 days. Ledger sums of detached months carry forward, so balances stay whole.
TOKENWAY_USAGE_RETENTION_DAYS = env_int("TOKENWAY_USAGE_RETENTION_DAYS", 0)
TOKENWAY_LEDGER_RETENTION_DAYS = env_int("TOKENWAY_LEDGER_RETENTION_DAYS", 0)

# Regions: probe workers each consume probes.<region>; the worker's own region comes from TOKENWAY_REGION.
TOKENWAY_REGIONS = env_list("TOKENWAY_REGIONS", ["beijing", "shanghai", "shenzhen", "chengdu"])
TOKENWAY_REGION = env_str("TOKENWAY_REGION", TOKENWAY_REGIONS[0] if TOKENWAY_REGIONS else "local")

SIM_PORT = env_int("SIM_PORT", 8100)
SIM_BASE_URL = env_str("SIM_BASE_URL", f"http://127.0.0.1:{SIM_PORT}")

STRIPE_API_KEY = env_secret("STRIPE_API_KEY", "")
STRIPE_API_BASE = env_str("STRIPE_API_BASE", "")
STRIPE_METER_API_BASE = env_str("STRIPE_METER_API_BASE", "")
STRIPE_WEBHOOK_SECRET = env_secret("STRIPE_WEBHOOK_SECRET", "")
STRIPE_METER_EVENT_NAME = env_str("STRIPE_METER_EVENT_NAME", "tokenway_usage")

# TOKENWAY_LOG_FORMAT=json: one JSON object per line with the gateway's request id (contracts.jsonlog).
LOG_FORMAT = env_str("TOKENWAY_LOG_FORMAT", "text")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "contracts.jsonlog.RequestIdFilter"}},
    "formatters": {"line": {"()": "contracts.jsonlog.formatter_for", "fmt": LOG_FORMAT}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "line", "filters": ["request_id"]}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
