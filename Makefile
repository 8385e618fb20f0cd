# Two entry points, both safe on a fresh machine (Python >= 3.11 with venv):
#   make demo   creates .venv, installs llmwiki, runs the main job on workspace/
#   make test   creates .venv, installs llmwiki with its test extra, runs pytest
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	# torch first, pinned: this CPU wheel is on disk; anything unpinned pulls a CUDA build.
	$(VENV)/bin/pip install --quiet torch==2.13.0
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki ingest --workspace workspace
	HF_HUB_OFFLINE=1 $(VENV)/bin/llmwiki status --workspace workspace

test: $(STAMP)
	HF_HUB_OFFLINE=1 $(VENV)/bin/python -m pytest

.PHONY: install demo test
