# Two commands set up everything on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
HOME_DIR ?= demo-home

.PHONY: run test lint bench fuzz soak install clean gates

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## launch the workbench on a seeded demo home with the offline model
run: $(STAMP)
	$(VENV)/bin/workbench demo --fresh --home $(HOME_DIR)

## install with the test extras and run the whole suite
test: $(STAMP)
	$(PY) -m pytest -n 2 -q --durations=25

## format check, lint, type check of engine/ and import contracts (docs/development.md, "Lint")
lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-logo

## benchmarks: numbers, ratios and peak memory (not part of `make test`)
bench: $(STAMP)
	$(PY) -m tests.bench $(BENCH)

## the fuzz suites with many more examples than `make test` runs
fuzz: $(STAMP)
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-5000} $(PY) -m pytest -q -p no:cacheprovider tests/test_fuzz_cli.py tests/test_fuzz_files.py \
		tests/test_archive_search.py -k "fuzz or safe_query or operator_sequence"

## 2,000 offline turns with editors, deciders and kills alongside, then an audit (not in `make test`)
soak: $(STAMP)
	$(PY) -m tests.soak --turns $${SOAK_TURNS:-2000}

## write engine/safety/gate_table.py again after a threat rule's pattern changed
gates: $(STAMP)
	$(PY) -c 'from engine.safety.rules import write_gate_table; write_gate_table()'
	$(VENV)/bin/ruff format -q engine/safety/gate_table.py

clean:
	rm -rf $(VENV) $(HOME_DIR) bench-data *.egg-info
