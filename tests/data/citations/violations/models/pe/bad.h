// A header that opens a bracket [ and a list; and ends a line with a \

// Dispatched once per command, as issue 16 item 1 asks.
int issued = 0;  // an issue number here would be one: (Issue 12)
