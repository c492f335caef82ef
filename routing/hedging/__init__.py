"""Hedging a late first byte with the next offering: the race of attempts, the policy deciding when to
hedge, its shared budget, and booking the loser's usage."""
