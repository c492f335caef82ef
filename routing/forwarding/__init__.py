"""Forwarding a call along its route: the body each offering is sent, provider credentials, failover
before the first byte (routing.failover's health board decides who is tried) and the hand-over to the relay."""
