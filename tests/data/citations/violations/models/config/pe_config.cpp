// A help text cites the project's own documents, as comments do:
    {"x", "FIXED cost of a CompositeCmd, cycles (docs/cost-model.md D3)"},
    // ADR-0064 D4: refused.
