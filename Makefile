# RealMath Workbench. `make run` sets everything up and serves the app; `make test` runs the suite
# (requirements-dev.txt: the test, bench and lint tools on top of the app's requirements.txt).
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
SYSTEM_PACKAGES ?= tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim fonts-noto-cjk chromium gettext
# The suite runs on one pytest-xdist worker per core (a test that must not share the machine's
# time can be pinned with @pytest.mark.xdist_group); PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= auto
PYTEST_ARGS ?=
# Worker processes: one per core (each OCR page is single-threaded, docs/ocr.md "Throughput").
WORKERS ?= $(shell nproc 2>/dev/null || echo 2)

# Interface translations (docs/architecture.md "Languages"): the .po files are the source, kept in
# git; the compiled .mo files are built on install (by `setup`) and ignored by git.
LOCALES := zh_Hans
PO_FILES := $(wildcard locale/*/LC_MESSAGES/*.po)
MO_FILES := $(PO_FILES:.po=.mo)
MAKEMESSAGES_IGNORE := -i 'var/*' -i 'tests/*' -i 'bench/*' -i 'test-artifacts/*' -i 'fixtures/*' -i 'docs/*' -i 'node_modules/*'

.PHONY: run test test-fuzz lint bench-smoke setup setup-dev system-deps migrate demo serve worker beat clean messages compilemessages

run: setup migrate demo
	@echo ""
	@echo "RealMath Workbench: open http://$(HOST):$(PORT)/ and log in with a demo user above."
	@OMP_THREAD_LIMIT=1 $(PY) -m celery -A config worker --loglevel=INFO --concurrency=$(WORKERS) --without-gossip --without-mingle & \
	 worker=$$!; $(PY) -m celery -A config beat --loglevel=INFO & \
	 beat=$$!; trap 'kill $$worker $$beat 2>/dev/null; wait $$worker $$beat 2>/dev/null' EXIT INT TERM; \
	 $(VENV)/bin/gunicorn config.wsgi --preload --bind $(HOST):$(PORT) --workers 2 --threads 4 --timeout 120 --access-logfile -

# The schemathesis fuzz of the API (marker `fuzz`, tests/test_api_fuzz.py) is most of the suite's
# time on a small machine: `make test` leaves it out, `make test-fuzz` runs it alone.
test: setup-dev
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadgroup -m "not fuzz" $(PYTEST_ARGS)

test-fuzz: setup-dev
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadgroup -m fuzz $(PYTEST_ARGS)

# ruff, then the import rules of pyproject.toml's [tool.importlinter] (docs/architecture.md).
lint: setup-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

# Every benchmark in bench/ at its --smoke size, on SQLite, each with a time limit; fails if one
# fails, overruns or leaves a process running (bench/smoke.py). BENCH_SMOKE_ARGS: e.g. --only export_bench.
bench-smoke: setup-dev
	env -u DATABASE_URL $(PY) bench/smoke.py $(BENCH_SMOKE_ARGS)

setup: system-deps $(VENV)/.installed compilemessages

setup-dev: setup $(VENV)/.installed-dev

$(VENV)/.installed: requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

# Refresh the .po files from the source (new strings come in empty, changed ones fuzzy), then list
# what is left to translate; `tests/test_i18n_catalog.py` fails while anything is.
messages: $(VENV)/.installed
	$(PY) manage.py makemessages $(foreach l,$(LOCALES),-l $(l)) -d django --add-location=file --no-obsolete $(MAKEMESSAGES_IGNORE) -i 'static/*'
	$(PY) manage.py makemessages $(foreach l,$(LOCALES),-l $(l)) -d djangojs --add-location=file --no-obsolete $(MAKEMESSAGES_IGNORE) -i 'static/vendor/*'
	@for po in $(PO_FILES); do \
	  n=$$(msgattrib --untranslated --no-obsolete $$po | grep -c '^msgid ' || true); \
	  f=$$(msgattrib --only-fuzzy --no-obsolete $$po | grep -c '^msgid ' || true); \
	  echo "$$po: $$n untranslated, $$f fuzzy (counts include the header when non-zero)"; done

compilemessages: $(MO_FILES)

locale/%.mo: locale/%.po
	msgfmt --check-format -o $@ $<

# System packages (tesseract with Chinese + English data, a CJK font, Debian's chromium for
# browser tests), installed with apt where it is available.
system-deps:
	@missing=""; for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then echo "Install these system packages by hand:$$missing"; exit 0; fi; \
	sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo"; \
	echo "Installing system packages:$$missing"; \
	$$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing

migrate: setup
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py create_demo_users
	$(PY) manage.py load_demo

serve:
	$(VENV)/bin/gunicorn config.wsgi --preload --bind $(HOST):$(PORT) --workers 2 --threads 4

# Workers on as many machines as you like; the periodic tasks' scheduler once per installation
# (`make beat`: a second beat on the same machine refuses to start, config/celery.py `one_beat`).
worker:
	OMP_THREAD_LIMIT=1 $(PY) -m celery -A config worker --loglevel=INFO --concurrency=$(WORKERS)

beat:
	$(PY) -m celery -A config beat --loglevel=INFO

clean:
	rm -rf var test-artifacts
