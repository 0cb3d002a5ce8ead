"""The view model: what changed in the store, the shown session's rows, and page text made inert for the screen."""
