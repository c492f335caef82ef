"""Gateway tests (routing/)."""
