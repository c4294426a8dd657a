"""The op library: registrations (kernel + shape rule + gradient) and public functions."""
