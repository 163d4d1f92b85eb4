"""Pytest plugin of the emulator (placeholder; being written)."""
