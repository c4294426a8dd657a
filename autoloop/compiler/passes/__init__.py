"""One transformer per statement kind; `conversion.py` runs them in order."""
