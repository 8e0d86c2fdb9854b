"""Zun's database: models (models), engine and sessions (engine), migrations (migration)."""
