"""Alembic environment and revisions of Zun's schema (run them through zun.db.migration)."""
