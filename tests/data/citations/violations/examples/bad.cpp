// The machine (ORIGIN-NOTES "The machine"); docs/architecture.md is fine.
