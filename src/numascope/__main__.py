from numascope.cli import main

raise SystemExit(main())
