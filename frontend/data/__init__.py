"""Read adapters the pages call. Each one prefers the owning domain's selector and says
plainly (``None`` / empty) when that domain has no data yet, so pages show an empty state."""
