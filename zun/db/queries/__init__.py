"""Queries, one module per resource."""
