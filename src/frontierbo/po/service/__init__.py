"""PO-GP-UCB's protocol as a real two-party service: the curator over HTTP (FastAPI, SQLite)
and the modeler as its client (docs/service.md). Needs the ``[service]`` extra."""
