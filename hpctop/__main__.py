"""``python -m hpctop``: the same entry point as the ``hpctop`` command."""

from hpctop.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
