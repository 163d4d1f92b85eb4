"""The service emulator (placeholder; being written)."""
