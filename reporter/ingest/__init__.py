"""Reading input files: lines with their numbers, format detection, validation."""
