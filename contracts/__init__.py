"""Contracts between the platform's sides: plain, versioned types with no Django import.

The gateway (routing/), metering, evaluation and the platform apps all read and
write these shapes; tests in tests/contracts pin them.
"""
