"""The dashboard's widgets: one module each, fed from store snapshots by the app (never by the store)."""
