// Help text kept as it is:
    {"x", "FIXED cost of a CompositeCmd, cycles (ADR-0064 D3)"},
    // ADR-0064 D4: not a string literal, so refused.
