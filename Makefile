# Gradients on the Wire: build, test, explore.
#   make book      build the website into _build/html, executing every notebook (cached)
#   make serve     show the built website at http://127.0.0.1:8000
#   make lab       open the chapters in JupyterLab
#   make student   write the notebooks without solutions into _build/student
#   make assignments  a graded otter-grader assignment per chapter into _build/assignments
#   make test      every test: lint, unit, doctest, notebooks (nbval, then again as on other processors),
#                  strict build + site checks, browser (axe included), front ends (JupyterLab, Colab path)
#   make bench     calculators (kernel and page recompute times), simulators, build times
# Each creates .venv from requirements.txt first if it is missing; the website
# also needs node/npm (MathJax and the widget manager are vendored from npm)
# and the browser tests Debian's chromium (installed with apt when missing).

SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
VENDOR_STAMP := _vendor/.installed
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export PYTHONHASHSEED := 0
export MPLBACKEND := Agg
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# One BLAS thread: how OpenBLAS splits a product over threads changes its last bits.
export OPENBLAS_NUM_THREADS := 1
# matplotlib's font cache lives with the environment it describes, so a cache left by another
# environment (or one removed while the cache was being written) cannot break a figure.
export MPLCONFIGDIR := $(CURDIR)/$(VENV)/mplconfig

.PHONY: how-we-know help book test lint unit notebooks build-check browser frontends links lab serve bench student clean distclean outputs venv vendor chromium teachers convert assignments fp-check

help:
	@sed -n '1,12p' Makefile

venv: $(STAMP)
$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	@touch $(STAMP)

# Browser assets of the website: npm packages pinned in package-lock.json,
# copied (only the files the pages use) into _vendor/lib, served as _static/lib.
$(NODE_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || ($(SUDO) apt-get update && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm)
	npm ci --no-audit --no-fund --ignore-scripts
	@touch $(NODE_STAMP)

$(VENDOR_STAMP): $(NODE_STAMP) tools/vendor.py $(wildcard tools/site_assets/*)
	$(PYTHON) tools/vendor.py node_modules _vendor
	@touch $(VENDOR_STAMP)

vendor: $(VENDOR_STAMP)

$(CHROMIUM):
	$(SUDO) apt-get update
	$(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium

chromium: $(CHROMIUM)

# The teachers' page is generated from the chapters' exercises.
teachers: $(STAMP)
	$(PY) tools/teachers.py

# The "How we know" page is generated from the registry of claims (each run once per version of the code).
how-we-know: $(STAMP)
	$(PY) tools/how_we_know.py

book: $(STAMP) $(VENDOR_STAMP) teachers how-we-know
	$(BIN)/jupyter-book build . --builder html
	@echo
	@echo "The book is built. Open file://$(CURDIR)/_build/html/index.html"
	@echo "or run 'make serve' and visit http://127.0.0.1:8000"

test: $(STAMP)
	@set -e; for part in lint unit notebooks fp-check build-check browser frontends; do \
	  start=$$(date +%s); \
	  $(MAKE) --no-print-directory $$part; \
	  echo "== make $$part: $$(( $$(date +%s) - start )) s"; \
	done

# The linter (ruff, pinned; rules in pyproject.toml).
lint: $(STAMP)
	$(BIN)/ruff check commlib tests tools bench chapters

unit: $(STAMP)
	$(BIN)/pytest -q tests commlib tools/student_copy.py tools/site_pages.py tools/execute_notebooks.py \
	  tools/inline_values.py tools/live_calculators.py tools/accessibility.py tools/prose_density.py --doctest-modules \
	  --ignore=tests/build --ignore=tests/browser --ignore=tests/frontends

notebooks: $(STAMP)
	$(BIN)/pytest -q --nbval chapters --nbval-sanitize-with tests/sanitize.cfg -p no:cacheprovider

# The same comparison under other floating-point environments (OpenBLAS forced to another core,
# numpy's SIMD narrowed): a stored output or a quoted number must not depend on the processor.
fp-check: $(STAMP)
	$(PY) tools/fp_check.py

build-check: $(STAMP) $(VENDOR_STAMP) teachers how-we-know
	$(BIN)/jupyter-book build . --builder html -W -n --keep-going
	$(BIN)/pytest -q tests/build

# Chromium over the built site: every page offline, math, widgets, animations,
# search, screenshots (light and dark) in _build/screenshots; the live
# calculators recomputing in the page (Pyodide) exactly as commlib does; axe-core
# (npm, test-only: read from node_modules, never copied into the site) on every page.
browser: $(STAMP) $(CHROMIUM) $(NODE_STAMP)
	@test -f _build/html/index.html || $(MAKE) --no-print-directory book
	$(BIN)/pytest -q tests/browser

# The other front ends: JupyterLab (with jupyterlab-myst) in chromium, every
# chapter run; and a fresh install of the package into an empty virtual
# environment, then a chapter's first cell (the Colab path, offline).
frontends: $(STAMP) $(CHROMIUM)
	$(BIN)/pytest -q tests/frontends

# Mechanical conversion of the chapters (setup cell, numbers in the prose,
# folded solutions), then their outputs re-stored. Idempotent.
convert: $(STAMP)
	$(PY) tools/convert_chapters.py
	$(PY) tools/execute_notebooks.py chapters/*.ipynb
	$(PY) tools/teachers.py

# Internal links, anchors and assets of the built site only.
links: $(STAMP)
	@test -f _build/html/index.html || $(MAKE) --no-print-directory book
	$(BIN)/pytest -q tests/build/test_site.py -k "internal_links or another_host or every_toc_page"

outputs: $(STAMP)
	$(PY) tools/execute_notebooks.py chapters/*.ipynb

# JupyterLab with jupyterlab-myst (requirements.txt): MyST admonitions, exercises,
# math, citations and the computed numbers of the prose render as on the website.
lab: $(STAMP)
	$(BIN)/jupyter lab chapters

serve:
	@test -f _build/html/index.html || $(MAKE) book
	$(PY) -m http.server 8000 --bind 127.0.0.1 --directory _build/html

bench: $(STAMP) $(VENDOR_STAMP)
	$(PY) bench/run.py

student: $(STAMP)
	$(PY) tools/student_copy.py chapters _build/student

# Each chapter's exercises as an otter-grader assignment: student notebook, public and hidden
# tests (numbers drawn per student), points, autograder archive (see the teachers' page).
assignments: $(STAMP)
	$(PY) tools/assignments.py --out _build/assignments

clean:
	rm -rf _build _vendor .pytest_cache

distclean: clean
	rm -rf node_modules $(VENV)
