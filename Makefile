# One command each: `make demo`, `make test`, `make bench`. Each creates .venv when absent.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench screenshots clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/hpctop --demo $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check hpctop tests bench
	$(BIN)/ruff format --check hpctop tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	$(BIN)/pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(BIN)/python -m bench $(if $(QUICK),--quick,)

screenshots: $(STAMP)
	$(BIN)/pip install --quiet -e '.[test,screenshots]'
	$(BIN)/python -m hpctop.tui.screenshots screenshots

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
