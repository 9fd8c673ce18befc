"""Polyhedral bridge to islpy (SCoPs, dependences, tiling); see DESIGN.md."""
