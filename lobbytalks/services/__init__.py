"""The domain, framework-free: each function takes the database, the actor and validated input."""
