"""One call's record and what it hands over at its end: the hold's allowance, the end state, the usage
event (to Redis, else the local spool, replayed later) and the drain of an abandoned upstream stream."""
