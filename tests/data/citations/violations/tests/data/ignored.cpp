// issue 11: a fixture of a fixture, never scanned.
