# mcp-notebook: `make lab` (the main job) and `make test` (the whole suite) set up what they need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8888

.PHONY: venv test lab bench clean

venv: $(STAMP)

# The venv is created once and reused; re-installed when pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	$(BIN)/jupyter labextension list 2>&1 | grep -q "mcp-notebook" || echo "note: labextension not listed (see labextension/README.md)"
	touch $@

test: venv
	$(BIN)/python -m pytest

lab: venv
	$(BIN)/jupyter lab --ip 127.0.0.1 --port $(PORT) --no-browser --allow-root \
		--ServerApp.root_dir=notebooks notebooks/01-first-call.ipynb

bench: venv
	$(BIN)/python bench/overhead.py

clean:
	rm -rf $(VENV) .pytest_cache
