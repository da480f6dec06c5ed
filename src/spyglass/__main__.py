from spyglass.cli import main

raise SystemExit(main())
