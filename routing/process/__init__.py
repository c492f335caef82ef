"""The gateway process itself: settings read once from the environment, its file-descriptor capacity,
and the periodic steps it runs on its event loop."""
