"""In-process state refreshed from Redis: key records, catalog and statistics snapshots."""
