"""Scheduling in zun-api: host filters and atomic claims (no Placement in the embedded mode)."""
