# Two commands do all the set-up on a fresh clone:
#   make serve   build the site and serve it with live reload at http://127.0.0.1:8000
#   make test    everything: unit tests, every chapter snippet, the strict build, built-site checks
# Run `make help` for the rest.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
MKDOCS := $(VENV)/bin/mkdocs
# One timestamp per commit, so the same sources build a byte-identical site (sitemap dates, gzip headers).
export SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
export PYTHONHASHSEED := 0
export NO_MKDOCS_2_WARNING := 1
# One BLAS thread: the book's matrices are small, and threads only contend on a shared machine.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
HOST := 127.0.0.1
PORT := 8000
# MkDocs serves the site under the path of site_url (as GitHub Pages will); / redirects there.
SITE_PATH := $(shell sed -n -E 's|^site_url: *https?://[^/]*(/.*)$$|\1|p' mkdocs.yml)

# pytest runs on two processes (pytest-xdist), each test file whole on one of them: a page's snippets
# share one namespace, and a module's fixtures (a browser measuring every page) are computed once.
# PYTEST_WORKERS=0 runs everything in this process. Inside a worker the lab's builders train in that
# process, with no pool of their own. The tests read the book's figures and tables from the cache the
# build fills (tests/conftest.py); an item missing from it is rendered once for the whole session.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL := $(if $(filter 0,$(PYTEST_WORKERS)),-p no:xdist,-n $(PYTEST_WORKERS) --dist loadfile)

VENV_STAMP := $(VENV)/.stamp-deps
NODE_STAMP := node_modules/.stamp-npm
TORCH_STAMP := $(VENV)/.stamp-torch
BROWSER_STAMP := $(VENV)/.stamp-browser

.PHONY: help setup serve build pdf pdf-if-browser test test-fast test-chapter chapter notebooks bench bench-lab bench-cluster bench-build bench-lighthouse lock clean

help: ## List the targets
	@echo "usage: make <target>"
	@echo
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-zA-Z_-]+):.*## (.*)/  \1\t\2/' | expand -t 16

# Python environment: created once, refreshed when the pins or the package metadata change.
$(VENV_STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[site,test,cluster]'
	@touch $@

# npm packages (MathJax for build-time math, axe-core and Lighthouse for the checks) come from the
# npm registry, pinned by package-lock.json, into the ignored node_modules/.
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# PyTorch is used only by the parity tests and the benchmark (pinned). TORCH_PIP_ARGS can name
# an extra index that serves the CPU-only build (CI does), instead of the much larger default one.
TORCH_PIP_ARGS ?=
$(TORCH_STAMP): $(VENV_STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt $(TORCH_PIP_ARGS) torch==2.13.0
	@touch $@

# Chromium for the browser checks: Debian's package, installed where we are root with apt.
$(BROWSER_STAMP):
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium for the browser checks"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else echo "chromium not found and cannot be installed here: the browser checks will be skipped"; fi
	@mkdir -p $(VENV) && touch $@

setup: $(VENV_STAMP) $(NODE_STAMP) ## Create .venv and node_modules (skipped when already done)

serve: setup ## Build and serve the site with live reload at http://127.0.0.1:8000 (another port: PORT=8001)
	@$(PY) -m rnnmem.site port-free $(HOST) $(PORT)
	@echo "Serving the book at http://$(HOST):$(PORT)$(SITE_PATH)  (live reload; Ctrl-C to stop)"
	$(MKDOCS) serve --dirty --dev-addr $(HOST):$(PORT)

build: setup ## Build the site into site/ (strict: any warning fails)
	$(MKDOCS) build --strict --clean --site-dir site

pdf: build $(BROWSER_STAMP) ## The book as one PDF, printed by Chromium from site/ (site/why-rnns-forget.pdf, linked from Home)
	$(PY) -m rnnmem.site pdf

# make test prints the PDF where a browser is (the browser checks are skipped without one, and so are the PDF's).
pdf-if-browser: build $(BROWSER_STAMP)
	@if [ -x "$${RNNMEM_CHROMIUM:-/usr/bin/chromium}" ]; then $(PY) -m rnnmem.site pdf; \
	else echo "no Chromium at $${RNNMEM_CHROMIUM:-/usr/bin/chromium}: the PDF is not printed and its checks are skipped"; fi

# The checks .pre-commit-config.yaml runs too, on the tools pinned in constraints.txt; configured in pyproject.toml.
# src/conftest.py is type-checked on its own: beside tests/built_site/conftest.py it would be a second `conftest`.
.PHONY: lint
lint: setup ## Format, lint and type checks: ruff format --check, ruff check, mypy (seconds)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy src/conftest.py

test: setup lint $(TORCH_STAMP) $(BROWSER_STAMP) build pdf-if-browser ## Everything: unit tests, Sybil, strict build, built-site checks
	$(PY) -m pytest $(PYTEST_PARALLEL)

test-fast: setup lint ## The pre-push check: unit tests and chapter snippets (no build, no notebook kernel, no browser, no new interpreter)
	$(PY) -m pytest $(PYTEST_PARALLEL) -m "not site and not browser and not build and not process"

# One chapter end to end, in seconds: its snippets (Sybil) and its builder test (pytest), then every page
# rule of rnnmem.site.check in the order CONTRIBUTING.md lists them (rnnmem.site check: placeholders,
# fences, code width, directives, captions, numbers, cross-references, citations, reference links, links,
# forward links, notebook, notebook prose, exercises, objectives), then `lint`'s checks (ruff format --check,
# ruff check, mypy) on the chapter's builder module and builder test. All three always run, so one pass reports
# every failure; any failing fails the target. Only docs/chapters/ is searched: an API page or notebook of the
# same name is never taken.
test-chapter: setup ## Check one chapter end to end, every page rule: make test-chapter CH=horizon
	@if ! printf '%s' "$${CH:-}" | grep -Eqx '[a-z0-9][a-z0-9-]*' || [ ! -f "docs/chapters/$${CH}.md" ]; then \
	  echo "usage: make test-chapter CH=<chapter>  (a file of docs/chapters/ without .md)" >&2; \
	  echo "make test-chapter: error: CH must name a chapter, got '$${CH:-}'; the chapters are:" >&2; \
	  ls docs/chapters/*.md | sed -E 's|^docs/chapters/(.*)\.md$$|  \1|' >&2; exit 2; fi
	@status=0; \
	files=$$(for f in "src/rnnmem/site/builders/$(subst -,_,$(CH)).py" "tests/builders/test_builders_$(subst -,_,$(CH)).py"; \
	  do test -f "$$f" && echo "$$f"; done); \
	$(PY) -m pytest -q -p no:xdist "docs/chapters/$(CH).md" \
	  $$(f="tests/builders/test_builders_$(subst -,_,$(CH)).py"; test -f "$$f" && echo "$$f") || status=1; \
	$(PY) -m rnnmem.site check "$(CH)" || status=1; \
	if [ -n "$$files" ]; then \
	  echo "lint of $$(echo $$files)"; \
	  $(dir $(PY))ruff format --check $$files || status=1; \
	  $(dir $(PY))ruff check $$files || status=1; \
	  $(dir $(PY))mypy $$files || status=1; \
	fi; \
	exit $$status

# A new chapter: page, builder module, builder test, nav and home entries (rnnmem.site.scaffold).
chapter: setup ## Start a chapter: make chapter NAME=long-memory TITLE="Long memory"
	@$(PY) -m rnnmem.site.scaffold --name "$${NAME:-}" --title "$${TITLE:-}"

# The build adds every notebook to the site (site/downloads/); this writes them alone, to open one.
notebooks: setup ## Write the chapters' notebooks into build/notebooks/ (never committed; the build makes them)
	$(PY) -m rnnmem.site notebooks --out build/notebooks

# For the benchmarks only, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset, so numpy's OpenBLAS uses
# the kernel it picks for this CPU (the one a user's numpy would use); tests and CI never change them.
BENCH_ENV := env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE
bench: setup $(TORCH_STAMP) ## Benchmark LSTM, GRU, RNN against torch.nn and ensemble training
	$(BENCH_ENV) $(PY) tests/benchmarks/bench_lstm.py
	@echo
	$(BENCH_ENV) $(PY) tests/benchmarks/bench_ensemble.py
	@echo
	$(BENCH_ENV) $(PY) tests/benchmarks/bench_scan.py

bench-lab: setup ## What the lab's experiments add to a cold build, against the book before them (two cold builds)
	$(PY) tests/benchmarks/bench_lab_cost.py

bench-cluster: setup ## One sweep on a Dask cluster of one worker, of two, and on the local pool: speed-up and overhead ratios
	$(PY) tests/benchmarks/bench_cluster.py

bench-build: setup ## Benchmark the site build: cold, warm, and without the plugin
	$(PY) tests/benchmarks/bench_build.py

bench-lighthouse: build ## Lighthouse (mobile) on Home and every chapter, served as Pages does (HTTP/2, TLS, gzip); medians of 3 runs
	CHROME_PATH=$${CHROME_PATH:-/usr/bin/chromium} $(PY) tests/benchmarks/bench_lighthouse.py --port $${PORT:-8106}

lock: ## Refresh constraints.txt on purpose from the newest releases
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/pip install --quiet --upgrade pip
	.venv-lock/bin/pip install --quiet -e '.[site,test,cluster]' torch==2.13.0
	( echo "# Exact pins for every Python package; refresh with 'make lock'."; \
	  .venv-lock/bin/pip freeze --exclude-editable | grep -v '^rnnmem' | sed -E 's/^(torch==[^+]*)\+.*/\1/' | sort -f ) > constraints.txt
	rm -rf .venv-lock

clean: ## Remove the built site and the render cache (keeps .venv and node_modules)
	rm -rf site .cache

.DEFAULT:
	@echo "make: unknown target '$@'" >&2
	@$(MAKE) --no-print-directory help >&2
	@exit 2
