"""Views over the store: timeline, tool inspector, status and troubleshooting, help."""
