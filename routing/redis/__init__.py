"""The gateway's own Redis client: pipelined connections, Redis Cluster slots and routing."""
