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

# Two workers for all but the `serial` tests (wall-time asserts, layouts read under an idle loop),
# the Slurm tests on one of them (xdist_group "slurm": one real Slurm); then the serial ones alone.
test: lint
	$(BIN)/pytest -q -p no:cacheprovider -n 2 --dist loadgroup -m "not slow and not serial"
	$(BIN)/pytest -q -p no:cacheprovider -m "serial and not slow"

# P8 compares with kubectl (Debian's package): found on PATH, else installed, else P8 says it skipped
bench: $(STAMP)
	@if command -v kubectl >/dev/null 2>&1; then echo "bench: kubectl $$(command -v kubectl)"; \
	else echo "bench: kubectl not found: apt-get install kubectl (for P8)"; \
	  apt-get install -y -q kubectl >/dev/null 2>&1 || sudo -n apt-get install -y -q kubectl >/dev/null 2>&1 \
	  || echo "bench: kubectl could not be installed: P8 will say so and skip"; fi
	$(BIN)/python -m bench $(if $(QUICK),--quick,)

screenshots: $(STAMP)
	$(BIN)/pip install --quiet -e '.[test,screenshots]'
	$(BIN)/python -m hpctop.tui.screenshots screenshots

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
