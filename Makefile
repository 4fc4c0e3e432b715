# Two commands: `make run` serves the portal on SQLite with demo data; `make test` runs everything.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
VENDOR := static/vendor
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint typecheck test-sqlite test-postgres setup assets bench clean

setup: $(VENV)/.installed $(VENDOR)/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt requirements-conformance.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --ignore-requires-python -r requirements-conformance.txt
	touch $@

# Browser assets come from npm and are copied into static/vendor (never committed).
$(VENDOR)/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	rm -rf $(VENDOR) && mkdir -p $(VENDOR)/pico $(VENDOR)/chartjs
	cp node_modules/@picocss/pico/css/pico.min.css $(VENDOR)/pico/
	cp node_modules/chart.js/dist/chart.umd.min.js $(VENDOR)/chartjs/
	cp node_modules/@picocss/pico/LICENSE.md $(VENDOR)/pico/ 2>/dev/null || true
	cp node_modules/chart.js/LICENSE.md $(VENDOR)/chartjs/ 2>/dev/null || true
	touch $@

assets: $(VENDOR)/.installed

run: setup
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo
	@echo "Serving the portal at http://$(HOST):$(PORT)/"
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

# The suite on the embedded default, whatever the environment says.
# -rs names why each skipped test was skipped; --durations lists the slowest tests to keep them fast.
PYTEST_FLAGS ?= -q -rs --durations=10

test-sqlite: setup
	env -u DATABASE_URL -u CELERY_BROKER_URL $(BIN)/pytest $(PYTEST_FLAGS)

# The same suite on PostgreSQL with a real Celery worker on Redis, when they are configured.
test-postgres: setup
	@if [ -n "$$DATABASE_URL" ]; then \
		$(BIN)/pytest $(PYTEST_FLAGS); \
	else \
		echo "DATABASE_URL not set: skipping the PostgreSQL run (.ci/run sets it)"; \
	fi

test: lint typecheck test-sqlite test-postgres

bench: setup
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) node_modules $(VENDOR) staticfiles db.sqlite3 var
