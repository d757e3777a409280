"""The systems layer: what a system declares (:mod:`.declare`), the command line built from it
(:mod:`.commands`), the one run-on-your-data path (:mod:`.userrun`) and the conformance checks
(:mod:`.checks`). See docs/architecture.md."""
