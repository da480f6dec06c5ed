"""One module per family of commands, named as the resource; each declares ``register(sub, common)``."""
