"""pydantic request models: the single source for validation and published schemas."""
