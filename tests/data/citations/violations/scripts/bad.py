#!/usr/bin/env python3
# The address map (DESIGN.md "The boundary").
