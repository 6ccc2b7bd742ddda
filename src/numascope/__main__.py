"""`python -m numascope`: the command line, a Ctrl-C during its first imports included (one
line, exit 130; numascope.cli.main handles every stop signal after that)."""

import sys

try:
    from numascope.cli import main
except KeyboardInterrupt:
    import signal
    sys.stderr.write("numascope: interrupted (SIGINT)\n")
    raise SystemExit(128 + int(signal.SIGINT)) from None

raise SystemExit(main())
