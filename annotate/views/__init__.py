"""Pages of the annotate app: ``common`` (home, campaign entry, crowd arrival), ``frank``, ``bump``, ``manage``."""
