# Two entry points, both safe on a fresh machine (Python >= 3.11 with venv):
#   make demo   creates .venv, installs llmwiki, runs the main job on workspace/
#   make test   creates .venv, installs llmwiki with its test extra, runs pytest (make test-fast: without the slow tier)
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	# torch first, pinned: this CPU wheel is on disk; anything unpinned pulls a CUDA build.
	$(VENV)/bin/pip install --quiet torch==2.13.0
	$(VENV)/bin/pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

install: $(STAMP)

# The main job, end to end on a fresh copy of the sample workspace (build/demo):
# a git-tracked workspace, ingest + wiki generation, status, a search, a dataset,
# a saved cited answer, verification, lint, history and the trace.
DEMO := build/demo
demo: $(STAMP)
	rm -rf $(DEMO) && mkdir -p build && cp -r workspace $(DEMO) && rm -rf $(DEMO)/.llmwiki $(DEMO)/wiki
	sed -i 's|folder = "../datasets"|folder = "../../datasets"|' $(DEMO)/wiki_config.toml
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki init $(DEMO)
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki ingest --workspace $(DEMO)
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki status --workspace $(DEMO)
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki search "who discovered radioactivity" --limit 3 --workspace $(DEMO)
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki datasets scientists --workspace $(DEMO)
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki ask "Who discovered radioactivity?" --save --workspace $(DEMO)
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki verify --all --workspace $(DEMO)
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki lint --severity warning --workspace $(DEMO)
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki history --workspace $(DEMO)
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki trace --workspace $(DEMO)
	@echo "Wiki written to $(DEMO)/wiki (see $(DEMO)/wiki/index.md); go back with: llmwiki restore COMMIT -w $(DEMO)"

# Tests run on every core (at most four workers: each loads the models once).
PYTEST := HF_HUB_OFFLINE=1 $(VENV)/bin/python -m pytest -n auto --maxprocesses=4

test: $(STAMP)
	$(PYTEST)

# The inner loop: every test but the slow tier (tests that start processes, and the PostgreSQL half).
test-fast: $(STAMP)
	$(PYTEST) -m "not slow"

.PHONY: install demo test test-fast
