"""Model adapters: the protocol models implement (light: imports numpy only, never torch)."""
